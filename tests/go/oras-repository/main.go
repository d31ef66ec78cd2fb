// Reads lines "<fetchConfig.oci> <spec.version>" on stdin and prints, per line, "ok <registry>
// <repository> <tag> <plain-http>" or "error: <message>", as cluster-api-operator v0.28.0 reads them
// before it pulls the artifact: its parseOCISource (internal/controller/oci_source.go; a transcription,
// the one stand-in here, because Go does not let another module call an internal package: an
// "http://" prefix means plain HTTP, a tag in the value wins over the version), then the real oras-go
// remote.NewRepository (CopyOCIStore), at the oras-go version the operator's
// go.mod requires. Built by infra/model/platform/mirrors.test.ts through tests/go-programs.ts.
package main

import (
	"bufio"
	"fmt"
	"os"
	"strings"

	"oras.land/oras-go/v2/registry/remote"
)

// parseOCISource: transcribed from sigs.k8s.io/cluster-api-operator@v0.28.0, internal/controller/oci_source.go.
func parseOCISource(url string, version string) (string, string, bool) {
	url, plainHTTP := strings.CutPrefix(url, "http://")
	if parts := strings.SplitN(url, ":", 3); len(parts) == 2 && !strings.Contains(parts[1], "/") {
		url = parts[0]
		version = parts[1]
	} else if len(parts) == 3 {
		version = parts[2]
		url = fmt.Sprintf("%s:%s", parts[0], parts[1])
	}
	return url, version, plainHTTP
}

func main() {
	scanner := bufio.NewScanner(os.Stdin)
	for scanner.Scan() {
		value, version, _ := strings.Cut(scanner.Text(), " ")
		url, tag, plainHTTP := parseOCISource(value, version)
		repository, err := remote.NewRepository(url)
		if err != nil {
			fmt.Printf("error: %v\n", err)
			continue
		}
		fmt.Printf("ok %s %s %s %t\n", repository.Reference.Registry, repository.Reference.Repository, tag, plainHTTP)
	}
}
