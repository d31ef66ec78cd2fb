#!/usr/bin/env node
// @ts-check
// Entry point of the k3s upgrades' installer Command (`create`): the program lives with its component (components/k3s-upgrades/install-system-upgrade-controller.mjs).
// This path stays because each deployed stack keeps the command line `node scripts/install-system-upgrade-controller.mjs` in
// its state, and a changed command line runs `create` again at the next `up`
// (@pulumi/command@1.2.1: local/command.d.ts, `create`), which for the PKI would mean new CAs.
import "../components/k3s-upgrades/install-system-upgrade-controller.mjs";
