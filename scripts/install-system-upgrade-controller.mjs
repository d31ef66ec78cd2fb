#!/usr/bin/env node
// @ts-check
// Entry point of the k3s upgrades' installer Command (`create`); the program lives with its component (components/k3s-upgrades/install-system-upgrade-controller.mjs).
// Deployed stacks keep `node scripts/install-system-upgrade-controller.mjs` in their state: a changed command line would run it again at the next `up`
// (infra/model/contract/script-entry-points.ts).
import "../components/k3s-upgrades/install-system-upgrade-controller.mjs";
