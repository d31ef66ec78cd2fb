// Reads one `fetchConfig.oci` value per line on stdin and prints "ok <registry> <repository> <plain-http>"
// or "error: <message>" per line, as cluster-api-operator v0.28.0 reads it before it pulls the
// artifact: the "http://" prefix cut off (internal/controller/oci_source.go, parseOCISource), then
// oras-go's remote.NewRepository (CopyOCIStore), at the oras-go version the operator's go.mod requires.
// Built by infra/model/platform/mirrors.test.ts through tests/go-programs.ts.
package main

import (
	"bufio"
	"fmt"
	"os"
	"strings"

	"oras.land/oras-go/v2/registry/remote"
)

func main() {
	scanner := bufio.NewScanner(os.Stdin)
	for scanner.Scan() {
		value, plainHTTP := strings.CutPrefix(scanner.Text(), "http://")
		repository, err := remote.NewRepository(value)
		if err != nil {
			fmt.Printf("error: %v\n", err)
			continue
		}
		fmt.Printf("ok %s %s %t\n", repository.Reference.Registry, repository.Reference.Repository, plainHTTP)
	}
}
