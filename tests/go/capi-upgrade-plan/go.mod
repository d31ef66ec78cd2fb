module capi-fleet.test/capi-upgrade-plan

go 1.24.0

// Cluster API's own planner and Cluster webhooks at the catalog's version
// (infra/model/versions/upgrade-plan.capi.test.ts checks it); the rest at the versions its go.mod pins.
require (
	github.com/blang/semver/v4 v4.0.0
	github.com/evanphx/json-patch/v5 v5.9.11
	github.com/go-logr/logr v1.4.3
	k8s.io/api v0.34.3
	k8s.io/apiextensions-apiserver v0.34.3
	k8s.io/apimachinery v0.34.3
	k8s.io/client-go v0.34.3
	sigs.k8s.io/cluster-api v1.12.10
	sigs.k8s.io/controller-runtime v0.22.5
)
