// Reads one JSON request per line on stdin and answers, per line, with what Cluster API's own
// upgrade planner says (sigs.k8s.io/cluster-api@v1.12.10: exp/topology/desiredstate/upgrade_plan.go):
//
//	{"op":"compute", "desired", "controlPlane", "workers": [MachineDeployment versions], "kubernetesVersions"}
//	  -> ComputeUpgradePlan with the func desired_state.go picks (the ClusterClass list, else one minor):
//	     {"controlPlanePlan", "workersPlan", "minWorkers", "error"}
//	{"op":"validate", "desired", "controlPlane", "minWorkers", "controlPlanePlan", "workersPlan"}
//	  -> DefaultAndValidateUpgradePlans: {"workersPlan", "error"}
//	{"op":"compare", "a", "b"} -> util/version.Compare(a, b, WithBuildTags()): {"comparison"}
//	{"op":"admit", "from", "desired", "kubernetesVersions"}
//	  -> CAPI's own Cluster admission webhooks (mutating, then validating) on an update of
//	     spec.topology.version from "from" to "desired", the cluster settled at "from":
//	     {"allowed", "denials": [field: message]} (see admit.go)
//
// Built by infra/model/versions/upgrade-plan.capi.test.ts from the Go module cache (tests/go-programs.ts).
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"

	"github.com/blang/semver/v4"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/cluster-api/exp/topology/desiredstate"
	"sigs.k8s.io/cluster-api/exp/topology/scope"
	"sigs.k8s.io/cluster-api/util/version"
)

type request struct {
	Op                 string   `json:"op"`
	Desired            string   `json:"desired"`
	ControlPlane       string   `json:"controlPlane"`
	Workers            []string `json:"workers"`
	KubernetesVersions []string `json:"kubernetesVersions"`
	MinWorkers         string   `json:"minWorkers"`
	ControlPlanePlan   []string `json:"controlPlanePlan"`
	WorkersPlan        []string `json:"workersPlan"`
	A                  string   `json:"a"`
	B                  string   `json:"b"`
	From               string   `json:"from"`
}

type response struct {
	ControlPlanePlan []string `json:"controlPlanePlan"`
	WorkersPlan      []string `json:"workersPlan"`
	MinWorkers       string   `json:"minWorkers"`
	Comparison       int      `json:"comparison"`
	Allowed          *bool    `json:"allowed,omitempty"`
	Denials          []string `json:"denials,omitempty"`
	Error            string   `json:"error,omitempty"`
}

func compute(req request) response {
	s := scope.New(&clusterv1.Cluster{})
	s.Blueprint.Topology = clusterv1.Topology{Version: req.Desired}
	s.Current.ControlPlane = &scope.ControlPlaneState{Object: &unstructured.Unstructured{Object: map[string]interface{}{
		"spec": map[string]interface{}{"version": req.ControlPlane},
	}}}
	s.Current.MachineDeployments = scope.MachineDeploymentsStateMap{}
	for i, v := range req.Workers {
		name := fmt.Sprintf("md-%d", i)
		md := &clusterv1.MachineDeployment{ObjectMeta: metav1.ObjectMeta{Name: name}}
		md.Spec.Template.Spec.Version = v
		s.Current.MachineDeployments[name] = &scope.MachineDeploymentState{Object: md}
	}
	getUpgradePlan := desiredstate.GetUpgradePlanOneMinor
	if len(req.KubernetesVersions) > 0 {
		getUpgradePlan = desiredstate.GetUpgradePlanFromClusterClassVersions(req.KubernetesVersions)
	}
	if err := desiredstate.ComputeUpgradePlan(context.Background(), s, getUpgradePlan); err != nil {
		// The workers' version is set before the plan is asked for.
		return response{MinWorkers: s.UpgradeTracker.MinWorkersVersion, Error: err.Error()}
	}
	return response{
		ControlPlanePlan: s.UpgradeTracker.ControlPlane.UpgradePlan,
		WorkersPlan:      s.UpgradeTracker.MachineDeployments.UpgradePlan,
		MinWorkers:       s.UpgradeTracker.MinWorkersVersion,
	}
}

func main() {
	scanner := bufio.NewScanner(os.Stdin)
	scanner.Buffer(make([]byte, 1<<20), 1<<20)
	out := json.NewEncoder(os.Stdout)
	var webhook *admitter
	for scanner.Scan() {
		var req request
		if err := json.Unmarshal(scanner.Bytes(), &req); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
		var res response
		switch req.Op {
		case "compute":
			res = compute(req)
		case "validate":
			plan, err := desiredstate.DefaultAndValidateUpgradePlans(req.Desired, req.ControlPlane, req.MinWorkers, req.ControlPlanePlan, req.WorkersPlan)
			res = response{WorkersPlan: plan}
			if err != nil {
				res.Error = err.Error()
			}
		case "admit":
			if webhook == nil {
				var err error
				if webhook, err = newAdmitter(); err != nil {
					fmt.Fprintln(os.Stderr, err)
					os.Exit(2)
				}
			}
			res = webhook.admit(req)
		case "compare":
			a, errA := semver.ParseTolerant(req.A)
			b, errB := semver.ParseTolerant(req.B)
			if errA != nil || errB != nil {
				res.Error = fmt.Sprint(errA, errB)
			} else {
				res.Comparison = version.Compare(a, b, version.WithBuildTags())
			}
		default:
			fmt.Fprintln(os.Stderr, "unknown op", req.Op)
			os.Exit(2)
		}
		if err := out.Encode(res); err != nil {
			os.Exit(2)
		}
	}
}
