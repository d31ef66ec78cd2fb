module capi-fleet.test/net-parse-cidr

go 1.22
