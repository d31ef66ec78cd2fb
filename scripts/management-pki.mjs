#!/usr/bin/env node
// @ts-check
// Entry point of the management PKI Commands (`create`): the program lives with its component (components/management-cluster/management-pki.mjs).
// This path stays because each deployed stack keeps the command line `node scripts/management-pki.mjs` in
// its state, and a changed command line runs `create` again at the next `up`
// (@pulumi/command@1.2.1: local/command.d.ts, `create`), which for the PKI would mean new CAs.
import { runCommandLine } from "../components/management-cluster/management-pki.mjs";

runCommandLine();
