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
	"flag"
	"fmt"
	"os"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	appsv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/apps/v1alpha1"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/controller/daemonset"
	decisioncontroller "github.com/enhanced-liveness/enhanced-liveness-operator/internal/controller/decision"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/manager/certs"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/manager/managercache"
)

// flags are all of the manager's command line, bound to one flag set.
type flags struct {
	operatorNamespace string
	server            *serverFlags
	policy            *policyFlags
	packaging         *packagingFlags
	scale             *scaleFlags
	zap               zap.Options
	// printVersion: --version prints the build (internal/version) and exits.
	printVersion bool
}

// defaultOperatorNamespace is the namespace the manager runs in ($POD_NAMESPACE, from the downward
// API), else the one config/default installs into: the default of every namespace flag.
func defaultOperatorNamespace() string {
	if ns := os.Getenv("POD_NAMESPACE"); ns != "" {
		return ns
	}
	return appsv1alpha1.DefaultOperatorNamespace
}

func bindFlags(fs *flag.FlagSet) *flags {
	// Production logging by default: JSON at info level (--zap-devel for the console and debug).
	f := &flags{zap: zap.Options{}}
	fs.StringVar(&f.operatorNamespace, "operator-namespace", defaultOperatorNamespace(),
		"The operator's namespace (default $POD_NAMESPACE, else "+appsv1alpha1.DefaultOperatorNamespace+"): "+
			"never enrolled by the pod webhook; holds the node daemon's DaemonSet and Leases, the probe-context "+
			"signing key and the webhook certificate Secret.")
	f.server = bindServerFlags(fs)
	f.policy = bindPolicyFlags(fs)
	f.packaging = bindPackagingFlags(fs)
	f.scale = bindScaleFlags(fs)
	f.zap.BindFlags(fs)
	fs.BoolVar(&f.printVersion, versionFlag, false, "Print the manager's version, git revision and Go version, and exit.")
	return f
}

// config is the manager's configuration: the flags and the environment resolved and validated
// once, before anything starts. Every setup step takes what it needs from here, so no two of
// them can disagree (the operator namespace of the pod webhook is the controllers' one).
type config struct {
	operatorNamespace string
	// webhooks is false when ENABLE_WEBHOOKS=false (make run, benchmarks): no webhook, no
	// webhook certificate.
	webhooks        bool
	cache           managercache.Config
	policy          decisioncontroller.Config
	daemon          daemonset.Config
	ownerDeployment string
	certs           certs.Options
	signingKey      string // the Secret holding the probe-context signing key
	// daemonUser is the node daemon's user name, which the node-scope admission policy holds
	// to its own node.
	daemonUser string
	// monitoring: the manager keeps its PrometheusRule and ServiceMonitor (--monitoring=auto).
	monitoring bool
}

// resolve validates the flags; an error names the flag and the rule it breaks.
func (f *flags) resolve() (config, error) {
	ns := f.operatorNamespace
	c := config{
		operatorNamespace: ns,
		webhooks:          os.Getenv("ENABLE_WEBHOOKS") != "false",
		cache:             managercache.Config{OperatorNamespace: ns, Strip: f.scale.stripCache},
		ownerDeployment:   f.packaging.managerDeployment,
		signingKey:        f.packaging.probeSigningSecret,
		daemonUser:        f.packaging.daemonUsername(ns),
	}
	if errs := validation.IsDNS1123Label(ns); len(errs) > 0 {
		return c, fmt.Errorf("--operator-namespace: must be a namespace name: %s", strings.Join(errs, "; "))
	}
	if err := f.scale.validate(); err != nil {
		return c, err
	}
	var err error
	if c.policy, err = f.policy.config(ns); err != nil {
		return c, err
	}
	c.policy.MaxConcurrentReconciles = f.scale.decisionWorkers
	if c.daemon, err = f.packaging.daemonConfig(ns); err != nil {
		return c, err
	}
	if c.monitoring, err = f.packaging.monitoringEnabled(); err != nil {
		return c, err
	}
	if c.webhooks {
		if c.certs, err = f.packaging.certOptions(ns, f.server.webhookCertDir()); err != nil {
			return c, err
		}
	}
	return c, nil
}
