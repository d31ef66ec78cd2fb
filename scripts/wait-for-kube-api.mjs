#!/usr/bin/env node
// @ts-check
// Entry point of the management cluster's wait-for-API Command (`create`); the program lives with its component (components/management-cluster/wait-for-kube-api.mjs).
// Deployed stacks keep `node scripts/wait-for-kube-api.mjs` in their state: a changed command line would run it again at the next `up`
// (infra/model/contract/script-entry-points.ts).
import "../components/management-cluster/wait-for-kube-api.mjs";
