// Reads one cron expression per line on stdin and prints "ok" or "error: <message>" per line,
// as robfig/cron's standard parser (the one k3s schedules its etcd snapshots with) answers.
// Built by infra/model/config/cron.test.ts from the Go module cache only.
package main

import (
	"bufio"
	"fmt"
	"os"

	"github.com/robfig/cron/v3"
)

func main() {
	scanner := bufio.NewScanner(os.Stdin)
	for scanner.Scan() {
		if _, err := cron.ParseStandard(scanner.Text()); err != nil {
			fmt.Printf("error: %v\n", err)
		} else {
			fmt.Println("ok")
		}
	}
}
