package main
import (
 _ "github.com/cockroachdb/pebble/v2"
 _ "github.com/spf13/cobra"
 _ "github.com/prometheus/client_golang/prometheus"
)
func main(){}
