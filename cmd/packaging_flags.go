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

	corev1 "k8s.io/api/core/v1"

	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/controller/daemonset"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/manager/certs"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/trust/signature"
)

// Names of the objects config/default installs (kustomize namePrefix "enhanced-liveness-operator-").
const (
	namePrefix               = "enhanced-liveness-operator-"
	defaultManagerDeployment = namePrefix + "controller-manager"
)

// packagingFlags are the manager flags about its own installation: the webhook certificate and
// the node daemon DaemonSet (docs/install.md lists them).
type packagingFlags struct {
	certMode          string
	webhookSecret     string
	webhookService    string
	mutatingWebhook   string
	validatingWebhook string

	daemonImage          string
	daemonName           string
	daemonServiceAccount string
	daemonPullPolicy     string
	daemonCRIEndpoint    string
	managerDeployment    string

	probeSigningSecret string
	monitoring         string

	daemon *daemonFlags
}

// Values of --monitoring.
const (
	monitoringAuto = "auto"
	monitoringOff  = "off"
)

func bindPackagingFlags(fs *flag.FlagSet) *packagingFlags {
	f := &packagingFlags{daemon: bindDaemonFlags(fs)}
	fs.StringVar(&f.certMode, "cert-mode", string(certs.ModeSelf),
		"Who provides the webhook serving certificate: self (the manager issues and rotates it, and patches "+
			"caBundle of its webhook configurations) or olm (OLM mounts it; set by the OLM bundle).")
	fs.StringVar(&f.webhookSecret, "webhook-cert-secret", namePrefix+"webhook-server-cert",
		"cert-mode=self: Secret in the operator namespace that holds the CA and serving certificate.")
	fs.StringVar(&f.webhookService, "webhook-service", namePrefix+"webhook-service",
		"cert-mode=self: webhook Service the serving certificate is issued for.")
	fs.StringVar(&f.mutatingWebhook, "mutating-webhook-configuration", namePrefix+"mutating-webhook-configuration",
		"cert-mode=self: MutatingWebhookConfiguration whose caBundle the manager keeps current.")
	fs.StringVar(&f.validatingWebhook, "validating-webhook-configuration", namePrefix+"validating-webhook-configuration",
		"cert-mode=self: ValidatingWebhookConfiguration whose caBundle the manager keeps current.")

	fs.StringVar(&f.daemonImage, "daemon-image", os.Getenv("RELATED_IMAGE_DAEMON"),
		"Image of the node daemon (default $RELATED_IMAGE_DAEMON, else the image of the manager "+
			"Deployment's manager container).")
	fs.StringVar(&f.daemonName, "daemon-name", daemonset.DefaultName, "Name of the node daemon DaemonSet.")
	fs.StringVar(&f.daemonServiceAccount, "daemon-service-account", daemonset.DefaultName,
		"ServiceAccount of the node daemon (installed with the manifests, not created by the manager).")
	fs.StringVar(&f.daemonPullPolicy, "daemon-image-pull-policy", string(corev1.PullIfNotPresent),
		"imagePullPolicy of the node daemon: Always, IfNotPresent or Never.")
	fs.StringVar(&f.daemonCRIEndpoint, "daemon-cri-endpoint", "",
		"CRI endpoint passed to the daemons (--cri-endpoint); empty lets each daemon detect containerd or CRI-O.")
	fs.StringVar(&f.managerDeployment, "manager-deployment", defaultManagerDeployment,
		"The manager's own Deployment in the operator namespace: owner of the daemon DaemonSet; empty for none.")
	fs.StringVar(&f.probeSigningSecret, "probe-signing-secret", signature.DefaultSecretName,
		"Secret in the operator namespace holding the key that signs probe contexts (created at start if absent).")
	fs.StringVar(&f.monitoring, "monitoring", monitoringAuto,
		"The manager's PrometheusRule (every alert) and metrics ServiceMonitor in the operator namespace: "+
			"auto (created and kept while the Prometheus Operator's monitoring.coreos.com/v1 API is served) "+
			"or off (never touched).")
	return f
}

// monitoringEnabled tells whether the manager keeps its monitoring objects.
func (f *packagingFlags) monitoringEnabled() (bool, error) {
	switch f.monitoring {
	case monitoringAuto:
		return true, nil
	case monitoringOff:
		return false, nil
	}
	return false, fmt.Errorf("--monitoring: must be %s or %s, got %q", monitoringAuto, monitoringOff, f.monitoring)
}

// daemonUsername is the node daemon ServiceAccount's user name, which the node-scope admission
// policy holds to its own node.
func (f *packagingFlags) daemonUsername(namespace string) string {
	return "system:serviceaccount:" + namespace + ":" + f.daemonServiceAccount
}

// certOptions validates the certificate flags for the given namespace and directory.
func (f *packagingFlags) certOptions(namespace, certDir string) (certs.Options, error) {
	mode, err := certs.ParseMode(f.certMode)
	if err != nil {
		return certs.Options{}, fmt.Errorf("--cert-mode: %w", err)
	}
	o := certs.Options{
		Mode: mode, Namespace: namespace, SecretName: f.webhookSecret, ServiceName: f.webhookService,
		CertDir: certDir, MutatingWebhook: f.mutatingWebhook, ValidatingWebhook: f.validatingWebhook,
	}
	return o, o.Validate()
}

// daemonConfig returns the desired daemon; an empty image is resolved by the controller.
func (f *packagingFlags) daemonConfig(namespace string) (daemonset.Config, error) {
	pull := corev1.PullPolicy(f.daemonPullPolicy)
	switch pull {
	case corev1.PullAlways, corev1.PullIfNotPresent, corev1.PullNever:
	default:
		return daemonset.Config{}, fmt.Errorf("--daemon-image-pull-policy: unknown policy %q", f.daemonPullPolicy)
	}
	c := daemonset.Config{
		Name: f.daemonName, Namespace: namespace, ServiceAccount: f.daemonServiceAccount,
		Image: f.daemonImage, ImagePullPolicy: pull, CRIEndpoint: f.daemonCRIEndpoint,
	}
	if err := f.daemon.applyTo(&c); err != nil {
		return daemonset.Config{}, err
	}
	// The image may still be empty here: the controller falls back to the manager's own.
	return c, daemonset.ValidateCRIEndpoint(c.CRIEndpoint)
}
