#!/usr/bin/env node
// @ts-check
// Entry point of a tenant's Karpenter hand-over Command (`create`): the program lives with its component (components/karpenter/hand-over.mjs).
// This path stays because each deployed stack keeps the command line in its state.
import "../components/karpenter/hand-over.mjs";
