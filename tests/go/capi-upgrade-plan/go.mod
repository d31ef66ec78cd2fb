module capi-fleet.test/capi-upgrade-plan

go 1.24.0

// Cluster API's own planner at the catalog's version (infra/model/upgrade-plan.capi.test.ts checks it);
// its go.mod pins the rest.
require (
	github.com/blang/semver/v4 v4.0.0
	k8s.io/apimachinery v0.34.3
	sigs.k8s.io/cluster-api v1.12.10
)
