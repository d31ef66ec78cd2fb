#!/usr/bin/env node
// @ts-check
// Entry point of the management PKI Commands' `create`; the program lives with its component (components/management-cluster/management-pki.mjs).
// Deployed stacks keep `node scripts/management-pki.mjs` in their state: a changed command line would make new certificate authorities for a running cluster
// (infra/model/contract/script-entry-points.ts).
import { runCommandLine } from "../components/management-cluster/management-pki.mjs";

runCommandLine();
