// Reads one JSON request per line on stdin, {"template": "...", "variables": {...}}, and prints one
// JSON line per request: {"value": <JSON>} or {"error": "..."}, as Cluster API's topology
// controller renders a ClusterClass patch's `valueFrom.template` or `enabledIf`:
// sigs.k8s.io/cluster-api@v1.12.10: internal/controllers/topology/cluster/patches/inline/json_patch_generator.go,
// `renderValueTemplate` (text/template with sprig's hermetic functions, the variables as their Go
// types, the output read as YAML) and `patchIsEnabled` (enabled only when the value is `true`).
// Built by infra/model/platform/hetzner-cluster-class.test.ts from the Go module cache only.
package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"text/template"

	"github.com/Masterminds/sprig/v3"
	"sigs.k8s.io/yaml"
)

type request struct {
	Template  string                     `json:"template"`
	Variables map[string]json.RawMessage `json:"variables"`
}

// rawJSON unmarshals as apiextensionsv1.JSON does (k8s.io/apiextensions-apiserver: pkg/apis/apiextensions/v1/marshal.go).
type rawJSON struct{ Raw []byte }

func (s *rawJSON) UnmarshalJSON(in []byte) error {
	if len(in) > 0 && !bytes.Equal(in, []byte("null")) {
		s.Raw = append(s.Raw[0:0], in...)
	}
	return nil
}

func render(req request) (json.RawMessage, error) {
	tpl, err := template.New("tpl").Funcs(sprig.HermeticTxtFuncMap()).Parse(req.Template)
	if err != nil {
		return nil, fmt.Errorf("failed to parse template: %q: %w", req.Template, err)
	}
	// calculateTemplateData: the variables marshalled and read back as Go types.
	tmp, err := json.Marshal(req.Variables)
	if err != nil {
		return nil, err
	}
	data := map[string]interface{}{}
	if err := json.Unmarshal(tmp, &data); err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	if err := tpl.Execute(&buf, data); err != nil {
		return nil, fmt.Errorf("failed to render template: %q: %w", req.Template, err)
	}
	value := rawJSON{}
	if err := yaml.Unmarshal(buf.Bytes(), &value); err != nil {
		return nil, fmt.Errorf("failed to unmarshal rendered template: %q: %w", buf.String(), err)
	}
	if value.Raw == nil {
		return json.RawMessage("null"), nil
	}
	return value.Raw, nil
}

func main() {
	scanner := bufio.NewScanner(os.Stdin)
	scanner.Buffer(make([]byte, 1<<20), 1<<24)
	out := json.NewEncoder(os.Stdout)
	for scanner.Scan() {
		var req request
		if err := json.Unmarshal(scanner.Bytes(), &req); err != nil {
			_ = out.Encode(map[string]string{"error": "bad request: " + err.Error()})
			continue
		}
		value, err := render(req)
		if err != nil {
			_ = out.Encode(map[string]string{"error": err.Error()})
		} else {
			_ = out.Encode(map[string]json.RawMessage{"value": value})
		}
	}
}
