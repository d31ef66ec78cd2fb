// Preloaded by scripts/run-ts (`node --import`): tsx's loader, imported from here so that it
// resolves from this checkout's node_modules whatever the working directory.
import "tsx";
import module from "node:module";

// tsx turns on source maps for every file, node_modules included. Stack traces of the
// repository's own files keep them (positions in the .ts); the libraries' are left off: with them,
// Node reads each package's .js.map and maps every stack the Pulumi SDK captures per resource
// (Resource.callsites), which costs a mocked run of the program about a tenth of its CPU time.
// setSourceMapsSupport is Node >= 22.14; on an older 22 they stay on.
module.setSourceMapsSupport?.(true, { nodeModules: false, generatedCode: false });
