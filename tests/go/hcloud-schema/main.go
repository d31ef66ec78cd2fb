// Decodes each message the stand-in Hetzner API received or sent into the hcloud-go schema type
// the real client uses for it, refusing fields the type does not have (github.com/hetznercloud/
// hcloud-go/v2@v2.40.0: hcloud/schema). Input: a JSON array of {"schema": <type>, "body": <json>}.
// Output: a JSON array of problems, one string each; empty when every message decodes.
package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"sort"

	"github.com/hetznercloud/hcloud-go/v2/hcloud/schema"
)

// A list response carries its collection and the pagination meta (hcloud-go decodes both from one body).
type firewallList struct {
	schema.FirewallListResponse
	schema.MetaResponse
}
type loadBalancerList struct {
	schema.LoadBalancerListResponse
	schema.MetaResponse
}
type serverList struct {
	schema.ServerListResponse
	schema.MetaResponse
}
type volumeList struct {
	schema.VolumeListResponse
	schema.MetaResponse
}
type networkList struct {
	schema.NetworkListResponse
	schema.MetaResponse
}
type primaryIPList struct {
	schema.PrimaryIPListResponse
	schema.MetaResponse
}
type floatingIPList struct {
	schema.FloatingIPListResponse
	schema.MetaResponse
}
type placementGroupList struct {
	schema.PlacementGroupListResponse
	schema.MetaResponse
}
type sshKeyList struct {
	schema.SSHKeyListResponse
	schema.MetaResponse
}
type actionList struct {
	schema.ActionListResponse
	schema.MetaResponse
}

var types = map[string]func() any{
	"FirewallCreateRequest":                     func() any { return &schema.FirewallCreateRequest{} },
	"FirewallCreateResponse":                    func() any { return &schema.FirewallCreateResponse{} },
	"FirewallGetResponse":                       func() any { return &schema.FirewallGetResponse{} },
	"FirewallUpdateRequest":                     func() any { return &schema.FirewallUpdateRequest{} },
	"FirewallUpdateResponse":                    func() any { return &schema.FirewallUpdateResponse{} },
	"FirewallActionSetRulesRequest":             func() any { return &schema.FirewallActionSetRulesRequest{} },
	"FirewallActionSetRulesResponse":            func() any { return &schema.FirewallActionSetRulesResponse{} },
	"FirewallActionApplyToResourcesRequest":     func() any { return &schema.FirewallActionApplyToResourcesRequest{} },
	"FirewallActionApplyToResourcesResponse":    func() any { return &schema.FirewallActionApplyToResourcesResponse{} },
	"FirewallActionRemoveFromResourcesRequest":  func() any { return &schema.FirewallActionRemoveFromResourcesRequest{} },
	"FirewallActionRemoveFromResourcesResponse": func() any { return &schema.FirewallActionRemoveFromResourcesResponse{} },
	"LoadBalancerCreateRequest":                 func() any { return &schema.LoadBalancerCreateRequest{} },
	"LoadBalancerCreateResponse":                func() any { return &schema.LoadBalancerCreateResponse{} },
	"ActionGetResponse":                         func() any { return &schema.ActionGetResponse{} },
	"ErrorResponse":                             func() any { return &schema.ErrorResponse{} },
	"FirewallListResponse":                      func() any { return &firewallList{} },
	"LoadBalancerListResponse":                  func() any { return &loadBalancerList{} },
	"ServerListResponse":                        func() any { return &serverList{} },
	"VolumeListResponse":                        func() any { return &volumeList{} },
	"NetworkListResponse":                       func() any { return &networkList{} },
	"PrimaryIPListResponse":                     func() any { return &primaryIPList{} },
	"FloatingIPListResponse":                    func() any { return &floatingIPList{} },
	"PlacementGroupListResponse":                func() any { return &placementGroupList{} },
	"SSHKeyListResponse":                        func() any { return &sshKeyList{} },
	"ActionListResponse":                        func() any { return &actionList{} },
}

func main() {
	var messages []struct {
		Schema string          `json:"schema"`
		Body   json.RawMessage `json:"body"`
	}
	if err := json.NewDecoder(os.Stdin).Decode(&messages); err != nil {
		fmt.Fprintln(os.Stderr, "hcloud-schema: input:", err)
		os.Exit(2)
	}
	problems := []string{}
	for i, message := range messages {
		newValue, known := types[message.Schema]
		if !known {
			names := make([]string, 0, len(types))
			for name := range types {
				names = append(names, name)
			}
			sort.Strings(names)
			problems = append(problems, fmt.Sprintf("[%d] %s: not a schema type this oracle knows (%v)", i, message.Schema, names))
			continue
		}
		decoder := json.NewDecoder(bytes.NewReader(message.Body))
		decoder.DisallowUnknownFields()
		if err := decoder.Decode(newValue()); err != nil {
			problems = append(problems, fmt.Sprintf("[%d] %s: %v", i, message.Schema, err))
		}
	}
	out, _ := json.Marshal(problems)
	fmt.Println(string(out))
}
