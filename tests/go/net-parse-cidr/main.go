// Reads one CIDR per line on stdin and prints, per line, how Go's net.ParseCIDR reads it (the
// parser Kubernetes, CAPI and CAPH validate cidrBlocks with): "error", or
// "ok <address bits> <prefix length> <network address, hex> <host bits clear>".
// Built by infra/model/config/cidr.test.ts with the Go toolchain only (no modules).
package main

import (
	"bufio"
	"encoding/hex"
	"fmt"
	"net"
	"os"
)

func main() {
	scanner := bufio.NewScanner(os.Stdin)
	for scanner.Scan() {
		ip, network, err := net.ParseCIDR(scanner.Text())
		if err != nil {
			fmt.Println("error")
			continue
		}
		ones, bits := network.Mask.Size()
		fmt.Printf("ok %d %d %s %v\n", bits, ones, hex.EncodeToString(network.IP), ip.Equal(network.IP))
	}
}
