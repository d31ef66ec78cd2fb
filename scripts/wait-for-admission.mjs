#!/usr/bin/env node
// @ts-check
// Entry point of the ClusterApi component's admission wait (its `create`): the program lives with its
// component (components/cluster-api/wait-for-admission.mjs). Deployed stacks keep the command line
// `node scripts/wait-for-admission.mjs` in their state, so this path stays when the program moves.
import "../components/cluster-api/wait-for-admission.mjs";
