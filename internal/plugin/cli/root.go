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

package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	appsv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/apps/v1alpha1"
	policyv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/policy/v1alpha1"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/version"
)

// Exit codes, as docs/kubectl-plugin.md lists them.
const (
	// ExitOK: the command ran.
	ExitOK = 0
	// ExitError: the API server could not be reached, refused an essential read, or the object
	// asked for does not exist.
	ExitError = 1
	// ExitUsage: the command line is wrong (an unknown flag, a missing argument, a bad -o value).
	ExitUsage = 2
)

// usageError marks an error of the command line.
type usageError struct{ error }

// Main runs the plugin with args (without the program name) and returns its exit code.
func Main(ctx context.Context, args []string, streams genericiooptions.IOStreams) int {
	root := NewCommand(streams)
	root.SetArgs(args)
	err := root.ExecuteContext(ctx)
	if err == nil {
		return ExitOK
	}
	_, _ = fmt.Fprintln(streams.ErrOut, "error:", err)
	if _, ok := errors.AsType[usageError](err); ok {
		return ExitUsage
	}
	return ExitError
}

// options are the flags every command shares.
type options struct {
	flags   *genericclioptions.ConfigFlags
	output  string
	streams genericiooptions.IOStreams
	now     func() time.Time
}

// NewCommand is the plugin's root command, with kubectl's connection flags (--namespace,
// --context, --kubeconfig, ...) and cobra's completion command.
func NewCommand(streams genericiooptions.IOStreams) *cobra.Command {
	o := &options{flags: genericclioptions.NewConfigFlags(true), streams: streams, now: time.Now}
	root := &cobra.Command{
		Use:   "kubectl-enhancedliveness",
		Short: "Explain what enhanced-liveness-operator does with your pods' liveness probes, and why",
		Long: "kubectl enhancedliveness explains, from the objects of your namespace, why a container was or was not " +
			"restarted: its mode, its probe as the node daemon runs it, the last results, the decision with the rule and the " +
			"numbers it compared, the hold and what ends it, what the kubelet did or would have done, and the restart requests.",
		Version:       version.Get().Version,
		SilenceUsage:  true,
		SilenceErrors: true,
		Annotations:   map[string]string{cobra.CommandDisplayNameAnnotation: "kubectl enhancedliveness"},
	}
	root.SetOut(streams.Out)
	root.SetErr(streams.ErrOut)
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return usageError{err} })
	o.flags.AddFlags(root.PersistentFlags())
	root.PersistentFlags().StringVarP(&o.output, "output", "o", "", "Output format: empty for text, json or yaml.")
	root.AddCommand(newExplainCommand(o), newStatusCommand(o))
	return root
}

// client is a direct client: every read goes to the API server (field selectors included).
func (o *options) client() (client.Client, error) {
	cfg, err := o.flags.ToRESTConfig()
	if err != nil {
		return nil, err
	}
	cfg.UserAgent = version.Get().UserAgent("kubectl-enhancedliveness")
	return client.New(cfg, client.Options{Scheme: scheme()})
}

func (o *options) namespace() (string, error) {
	ns, _, err := o.flags.ToRawKubeConfigLoader().Namespace()
	return ns, err
}

func scheme() *runtime.Scheme {
	s := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{clientgoscheme.AddToScheme, appsv1alpha1.AddToScheme, policyv1alpha1.AddToScheme} {
		if err := add(s); err != nil {
			panic(err)
		}
	}
	return s
}

func (o *options) checkOutput() error {
	switch o.output {
	case "", "json", "yaml":
		return nil
	}
	return usageError{fmt.Errorf("--output: must be json or yaml (or empty for text), got %q", o.output)}
}

// print writes v as the chosen output, or as text.
func (o *options) print(v any, text func(io.Writer) error) error {
	switch o.output {
	case "json":
		b, err := json.MarshalIndent(v, "", "  ")
		if err != nil {
			return err
		}
		_, err = fmt.Fprintln(o.streams.Out, string(b))
		return err
	case "yaml":
		b, err := yaml.Marshal(v)
		if err != nil {
			return err
		}
		_, err = o.streams.Out.Write(b)
		return err
	}
	return text(o.streams.Out)
}

// completePods completes a pod name of the namespace.
func (o *options) completePods(cmd *cobra.Command, args []string, _ string) ([]string, cobra.ShellCompDirective) {
	if len(args) > 0 {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	c, err := o.client()
	if err != nil {
		return nil, cobra.ShellCompDirectiveError
	}
	ns, err := o.namespace()
	if err != nil {
		return nil, cobra.ShellCompDirectiveError
	}
	pods := &corev1.PodList{}
	if err := c.List(cmd.Context(), pods, client.InNamespace(ns)); err != nil {
		return nil, cobra.ShellCompDirectiveError
	}
	names := make([]string, 0, len(pods.Items))
	for _, p := range pods.Items {
		names = append(names, p.Name)
	}
	return names, cobra.ShellCompDirectiveNoFileComp
}
