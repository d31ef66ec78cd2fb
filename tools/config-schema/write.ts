// `npm run config-schema`: writes stacks/stack-file.schema.json and the key table of
// docs/configuration.md from the zod schemas (stack-file-schema.ts); tests/repo/config-schema.test.ts
// fails while either differs from what this writes. Run by scripts/run-ts (tsx).
import { readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { docsPath, keyTable, schemaPath, spliceKeyTable, stackFileSchemaText } from "./stack-file-schema";

const repoRoot = path.resolve(__dirname, "../..");

// The document is checked first, so a missing marker leaves both files as they were.
const document = readFileSync(path.join(repoRoot, docsPath), "utf8");
const updated = spliceKeyTable(document, keyTable());
writeFileSync(path.join(repoRoot, schemaPath), stackFileSchemaText());
writeFileSync(path.join(repoRoot, docsPath), updated);
console.log(`config-schema: wrote ${schemaPath} and the key table in ${docsPath}`);
