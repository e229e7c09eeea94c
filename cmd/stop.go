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

package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	crconfig "sigs.k8s.io/controller-runtime/pkg/client/config"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/controller/nodestorm"
)

// stopCommand is the manager's one subcommand: what an uninstall runs before it deletes the
// manager and its RBAC (the Helm chart's pre-delete hook).
const stopCommand = "stop"

// stopFlags are the flags of `manager stop`.
type stopFlags struct {
	namespace, deployment string
	timeout               time.Duration
	zap                   zap.Options
}

func bindStopFlags(fs *flag.FlagSet) *stopFlags {
	f := &stopFlags{}
	fs.StringVar(&f.namespace, "namespace", defaultOperatorNamespace(),
		"Namespace of the manager Deployment ($POD_NAMESPACE when set).")
	fs.StringVar(&f.deployment, "manager-deployment", defaultManagerDeployment,
		"The manager Deployment to scale to 0 before the Nodes' conditions are set False; a Deployment "+
			"that does not exist is skipped.")
	fs.DurationVar(&f.timeout, "timeout", 2*time.Minute,
		"Longest wait for the manager's pods to end; pods still there after it are reported, and the "+
			"conditions are set False anyway.")
	f.zap.BindFlags(fs)
	crconfig.RegisterFlags(fs) // --kubeconfig, read by ctrl.GetConfig
	fs.Usage = func() {
		_, _ = fmt.Fprintf(fs.Output(), "Usage: manager %s [flags]\n\n"+
			"Scales the manager Deployment to 0, waits for its pods to end (the leader sets False the "+
			"EnhancedLivenessNodeStorm conditions it holds True as it stops), then sets False every such "+
			"condition still True. Run it before deleting the operator: an uninstall deletes the manager "+
			"together with the permissions it needs for that.\n\n", stopCommand)
		fs.PrintDefaults()
	}
	return f
}

// validate names the flag and the rule of a bad value.
func (f *stopFlags) validate() error {
	var errs []error
	if msgs := validation.IsDNS1123Label(f.namespace); len(msgs) > 0 {
		errs = append(errs, fmt.Errorf("--namespace: must be a namespace name: %s", strings.Join(msgs, "; ")))
	}
	if msgs := validation.IsDNS1123Subdomain(f.deployment); len(msgs) > 0 {
		errs = append(errs, fmt.Errorf("--manager-deployment: must be a Deployment name: %s", strings.Join(msgs, "; ")))
	}
	if f.timeout <= 0 {
		errs = append(errs, fmt.Errorf("--timeout: must be positive, got %s", f.timeout))
	}
	return errors.Join(errs...)
}

// runStop is `manager stop [flags]`.
func runStop(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("manager "+stopCommand, flag.ExitOnError)
	f := bindStopFlags(fs)
	_ = fs.Parse(args) // ExitOnError: a bad flag exits 2 with its message, -help exits 0
	if fs.NArg() > 0 {
		return fmt.Errorf("manager %s takes no arguments, got %q", stopCommand, fs.Args())
	}
	if err := f.validate(); err != nil {
		return fmt.Errorf("invalid flag: %w", err)
	}
	ctrl.SetLogger(zap.New(zap.UseFlagOptions(&f.zap)))
	log := ctrl.Log.WithName(stopCommand)
	cfg, err := ctrl.GetConfig()
	if err != nil {
		return fmt.Errorf("reading the API server's configuration: %w", err)
	}
	c, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		return fmt.Errorf("creating the API client: %w", err)
	}
	key := types.NamespacedName{Namespace: f.namespace, Name: f.deployment}
	res, err := nodestorm.Stop(ctrl.LoggerInto(ctx, log), c, nodestorm.StopOptions{Manager: key, Timeout: f.timeout})
	if err != nil {
		return err
	}
	switch {
	case !res.Scaled:
		log.Info("no manager Deployment to stop", "deployment", key)
	case len(res.Remaining) > 0:
		log.Info("the manager's pods did not end within --timeout; they cannot write either", "deployment", key,
			"pods", res.Remaining, "timeout", f.timeout)
	default:
		log.Info("the manager is stopped", "deployment", key)
	}
	log.Info("the Nodes' conditions nobody judges now are False", "condition", "EnhancedLivenessNodeStorm",
		"setFalse", res.Released)
	return nil
}
