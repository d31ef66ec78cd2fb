#!/usr/bin/env node
// @ts-check
// Entry point of a tenant's kubeconfig Command (`create`): the program lives with its component (components/tenant-cluster/workload-kubeconfig.mjs).
// This path stays because each deployed stack keeps the command line `node scripts/workload-kubeconfig.mjs` in
// its state, and a changed command line runs `create` again at the next `up`
// (@pulumi/command@1.2.1: local/command.d.ts, `create`), which for the PKI would mean new CAs.
import "../components/tenant-cluster/workload-kubeconfig.mjs";
