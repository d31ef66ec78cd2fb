#!/usr/bin/env node
// @ts-check
// Entry point of a tenant's delete-only Command (`delete`): the program lives with its component (components/tenant-cluster/drain-load-balancers.mjs).
// This path stays because each deployed stack keeps the command line `node scripts/drain-load-balancers.mjs` in
// its state, and a changed command line runs `create` again at the next `up`
// (@pulumi/command@1.2.1: local/command.d.ts, `create`), which for the PKI would mean new CAs.
import "../components/tenant-cluster/drain-load-balancers.mjs";
