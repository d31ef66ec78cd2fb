module capi-fleet.test/hcloud-schema

go 1.22

// The hcloud-go that terraform-provider-hcloud v1.63.0 (pulumi-hcloud v1.35.0's) is built with (its go.mod).
require github.com/hetznercloud/hcloud-go/v2 v2.40.0
