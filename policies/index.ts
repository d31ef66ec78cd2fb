// The capi-fleet policy pack. Only constructs the PolicyPack: its constructor starts the
// gRPC server the Pulumi engine talks to, so tests import ./rules instead.
import { PolicyPack } from "@pulumi/policy";
import { allRules } from "./rules";

new PolicyPack("capi-fleet", { policies: allRules });
