module capi-fleet.test/image-reference

go 1.25

// The version k8s.io/kubernetes v1.35 (the kubelet) and cluster-api-operator v0.28.0 require.
require github.com/distribution/reference v0.6.0
