module capi-fleet.test/oras-repository

go 1.25

// The version sigs.k8s.io/cluster-api-operator@v0.28.0's go.mod requires.
require oras.land/oras-go/v2 v2.6.2
