/*
Copyright 2026 The enhanced-liveness-operator Authors.

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License.
*/

// Command kubectl-enhancedliveness is the kubectl plugin of enhanced-liveness-operator: kubectl
// runs it as `kubectl enhancedliveness` when it is on the PATH (docs/kubectl-plugin.md).
package main

import (
	"context"
	"os"
	"os/signal"

	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/plugin/cli"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	code := cli.Main(ctx, os.Args[1:], genericiooptions.IOStreams{In: os.Stdin, Out: os.Stdout, ErrOut: os.Stderr})
	stop()
	os.Exit(code)
}
