// Command loadgen publishes synthetic partner events to a Kafka topic for load tests.
package main

import (
	"flag"
	"fmt"
	"os"
)

func main() {
	topic := flag.String("topic", "partner.parcelly.events", "Kafka topic to publish to")
	rate := flag.Int("rate", 500, "events per second")
	flag.Parse()
	if *rate <= 0 {
		fmt.Fprintln(os.Stderr, "loadgen: -rate must be positive")
		os.Exit(2)
	}
	fmt.Printf("publishing %d events/s to %s\n", *rate, *topic)
}
