#!/usr/bin/env node
// @ts-check
// Entry point of a tenant's Karpenter hand-over Command (`create`); the program lives with its component (components/karpenter/hand-over.mjs).
// Deployed stacks keep `node scripts/karpenter-hand-over.mjs` in their state: a changed command line would run it again at the next `up`
// (infra/model/contract/script-entry-points.ts).
import "../components/karpenter/hand-over.mjs";
