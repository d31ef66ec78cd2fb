// Reads one image reference per line on stdin and prints, per line, "ok <registry> <path> <tag>"
// or "error: <message>": how container runtimes and the kubelet read it, through the real
// github.com/distribution/reference (ParseNormalizedNamed: a first component without '.' or ':'
// that is not localhost means docker.io). Built by infra/model/platform/mirrors.test.ts through
// tests/go-programs.ts.
package main

import (
	"bufio"
	"fmt"
	"os"

	"github.com/distribution/reference"
)

func main() {
	scanner := bufio.NewScanner(os.Stdin)
	for scanner.Scan() {
		named, err := reference.ParseNormalizedNamed(scanner.Text())
		if err != nil {
			fmt.Printf("error: %v\n", err)
			continue
		}
		tag := "-"
		if tagged, ok := named.(reference.Tagged); ok {
			tag = tagged.Tag()
		}
		fmt.Printf("ok %s %s %s\n", reference.Domain(named), reference.Path(named), tag)
	}
}
