// The "admit" op: Cluster API's own Cluster webhooks, as its manager registers them
// (sigs.k8s.io/cluster-api@v1.12.10: webhooks/alias.go, internal/webhooks/cluster.go), called
// through their admission handlers without a listener. The webhooks live in an internal package;
// the exported alias is what reaches them. Their client reads, from memory, what they read from a
// management cluster: the ClusterClass (reconciled, with the request's kubernetesVersions), the
// KubeadmControlPlane at the old version and its CRD's contract label. No MachineDeployment or
// MachinePool exists, so a change the version rules allow is admitted.
package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"

	jsonpatch "github.com/evanphx/json-patch/v5"
	"github.com/go-logr/logr"
	admissionv1 "k8s.io/api/admission/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	controlplanev1 "sigs.k8s.io/cluster-api/api/controlplane/kubeadm/v1beta2"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/cluster-api/feature"
	capiwebhooks "sigs.k8s.io/cluster-api/webhooks"
)

const (
	namespace   = "default"
	clusterName = "c"
	className   = "class"
	// The paths of the +kubebuilder:webhook markers in internal/webhooks/cluster.go.
	mutatePath   = "/mutate-cluster-x-k8s-io-v1beta2-cluster"
	validatePath = "/validate-cluster-x-k8s-io-v1beta2-cluster"
)

// swappableReader lets each request give the webhooks its own objects.
type swappableReader struct{ client.Reader }

type admitter struct {
	mux    http.Handler
	reader *swappableReader
	scheme *runtime.Scheme
}

func newAdmitter() (*admitter, error) {
	// The webhook refuses every topology while the gate is off (validateTopology).
	if err := feature.MutableGates.Set(fmt.Sprintf("%s=true", feature.ClusterTopology)); err != nil {
		return nil, err
	}
	ctrl.SetLogger(logr.Discard())
	scheme := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{clusterv1.AddToScheme, controlplanev1.AddToScheme, apiextensionsv1.AddToScheme} {
		if err := add(scheme); err != nil {
			return nil, err
		}
	}
	// Never started: nothing connects to this address; only the webhook server's mux is used.
	mgr, err := ctrl.NewManager(&rest.Config{Host: "https://127.0.0.1:1"}, ctrl.Options{
		Scheme:                 scheme,
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
	})
	if err != nil {
		return nil, err
	}
	reader := &swappableReader{}
	if err := (&capiwebhooks.Cluster{Client: reader}).SetupWebhookWithManager(mgr); err != nil {
		return nil, err
	}
	return &admitter{mux: mgr.GetWebhookServer().WebhookMux(), reader: reader, scheme: scheme}, nil
}

func cluster(version string) *clusterv1.Cluster {
	c := &clusterv1.Cluster{
		TypeMeta:   metav1.TypeMeta{APIVersion: clusterv1.GroupVersion.String(), Kind: "Cluster"},
		ObjectMeta: metav1.ObjectMeta{Name: clusterName, Namespace: namespace},
	}
	c.Spec.ControlPlaneRef = clusterv1.ContractVersionedObjectReference{APIGroup: controlplanev1.GroupVersion.Group, Kind: "KubeadmControlPlane", Name: clusterName}
	c.Spec.Topology.ClassRef.Name = className
	c.Spec.Topology.Version = version
	return c
}

// admit sends an update of spec.topology.version from req.From to req.Desired through the
// mutating and then the validating webhook, as the API server does. The old object is the one
// the mutating webhook made of req.From on create (stored objects were defaulted).
func (a *admitter) admit(req request) response {
	class := &clusterv1.ClusterClass{ObjectMeta: metav1.ObjectMeta{Name: className, Namespace: namespace, Generation: 1}}
	class.Spec.KubernetesVersions = req.KubernetesVersions
	// Reconciled, or the webhook only warns (clusterClassIsReconciled).
	class.Status.ObservedGeneration = 1
	class.Status.Conditions = []metav1.Condition{{Type: clusterv1.ClusterClassVariablesReadyCondition, Status: metav1.ConditionTrue, Reason: "VariablesReady", LastTransitionTime: metav1.Now()}}

	a.reader.Reader = fake.NewClientBuilder().WithScheme(a.scheme).WithObjects(class).Build()
	old, denials, err := a.mutate(admissionv1.Create, cluster(req.From), nil)
	if err != nil || len(denials) > 0 {
		return response{Error: fmt.Sprint("defaulting the old Cluster: ", err, denials)}
	}

	// The control plane runs the old version and is not upgrading (status.version = spec.version);
	// its CRD carries the contract label GetObjectFromContractVersionedRef looks the API version up by.
	crd := &apiextensionsv1.CustomResourceDefinition{ObjectMeta: metav1.ObjectMeta{
		Name:   "kubeadmcontrolplanes." + controlplanev1.GroupVersion.Group,
		Labels: map[string]string{clusterv1.GroupVersion.String(): controlplanev1.GroupVersion.Version},
	}}
	kcp := &controlplanev1.KubeadmControlPlane{ObjectMeta: metav1.ObjectMeta{Name: clusterName, Namespace: namespace}}
	kcp.Spec.Version = old.Spec.Topology.Version
	kcp.Status.Version = old.Spec.Topology.Version
	a.reader.Reader = fake.NewClientBuilder().WithScheme(a.scheme).WithObjects(class, crd, kcp).Build()

	updated, denials, err := a.mutate(admissionv1.Update, cluster(req.Desired), old)
	if err != nil {
		return response{Error: err.Error()}
	}
	if len(denials) > 0 {
		allowed := false
		return response{Allowed: &allowed, Denials: denials}
	}
	res, err := a.review(validatePath, admissionv1.Update, updated, old)
	if err != nil {
		return response{Error: err.Error()}
	}
	return response{Allowed: &res.Allowed, Denials: denialsOf(res)}
}

func (a *admitter) mutate(op admissionv1.Operation, obj, old *clusterv1.Cluster) (*clusterv1.Cluster, []string, error) {
	res, err := a.review(mutatePath, op, obj, old)
	if err != nil {
		return nil, nil, err
	}
	if !res.Allowed {
		return nil, denialsOf(res), nil
	}
	raw, err := json.Marshal(obj)
	if err != nil {
		return nil, nil, err
	}
	if len(res.Patch) > 0 {
		patch, err := jsonpatch.DecodePatch(res.Patch)
		if err != nil {
			return nil, nil, err
		}
		if raw, err = patch.Apply(raw); err != nil {
			return nil, nil, err
		}
	}
	mutated := &clusterv1.Cluster{}
	return mutated, nil, json.Unmarshal(raw, mutated)
}

func (a *admitter) review(path string, op admissionv1.Operation, obj, old *clusterv1.Cluster) (*admissionv1.AdmissionResponse, error) {
	request := &admissionv1.AdmissionRequest{
		UID:       "1",
		Kind:      metav1.GroupVersionKind{Group: clusterv1.GroupVersion.Group, Version: clusterv1.GroupVersion.Version, Kind: "Cluster"},
		Resource:  metav1.GroupVersionResource{Group: clusterv1.GroupVersion.Group, Version: clusterv1.GroupVersion.Version, Resource: "clusters"},
		Name:      clusterName,
		Namespace: namespace,
		Operation: op,
	}
	var err error
	if request.Object.Raw, err = json.Marshal(obj); err != nil {
		return nil, err
	}
	if old != nil {
		if request.OldObject.Raw, err = json.Marshal(old); err != nil {
			return nil, err
		}
	}
	body, err := json.Marshal(admissionv1.AdmissionReview{TypeMeta: metav1.TypeMeta{APIVersion: "admission.k8s.io/v1", Kind: "AdmissionReview"}, Request: request})
	if err != nil {
		return nil, err
	}
	httpRequest := httptest.NewRequest(http.MethodPost, path, bytes.NewReader(body))
	httpRequest.Header.Set("Content-Type", "application/json")
	recorder := httptest.NewRecorder()
	a.mux.ServeHTTP(recorder, httpRequest)
	var review admissionv1.AdmissionReview
	if err := json.Unmarshal(recorder.Body.Bytes(), &review); err != nil || review.Response == nil {
		return nil, fmt.Errorf("%s answered %d: %s", path, recorder.Code, recorder.Body.String())
	}
	return review.Response, nil
}

// denialsOf lists a refusal's causes as "field: message", else its message.
func denialsOf(res *admissionv1.AdmissionResponse) []string {
	if res.Allowed || res.Result == nil {
		return nil
	}
	var denials []string
	if res.Result.Details != nil {
		for _, cause := range res.Result.Details.Causes {
			denials = append(denials, fmt.Sprintf("%s: %s", cause.Field, cause.Message))
		}
	}
	if len(denials) == 0 {
		denials = []string{res.Result.Message}
	}
	return denials
}
