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

// Package certs provides the webhook serving certificate without cert-manager.
//
// In ModeSelf (kustomize install) the manager keeps a CA and a serving certificate in a Secret,
// rotates both before they expire and writes the CA into caBundle of its own webhook
// configurations; the manager itself writes the certificate from the Secret into the webhook
// certificate directory (an emptyDir) as soon as it changes. The certificate work is done by
// github.com/open-policy-agent/cert-controller. In ModeOLM, OLM issues the certificate, mounts
// it into the same directory and patches caBundle itself.
package certs

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/open-policy-agent/cert-controller/pkg/rotator"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/webhook"

	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/ssa"
)

// Mode selects who provides the webhook serving certificate.
type Mode string

const (
	// ModeSelf: the manager issues, rotates and injects its own certificate.
	ModeSelf Mode = "self"
	// ModeOLM: OLM mounts the certificate and injects caBundle.
	ModeOLM Mode = "olm"

	// DefaultCertDir is where controller-runtime's webhook server looks for tls.crt/tls.key, and
	// where OLM mounts its certificate.
	DefaultCertDir = "/tmp/k8s-webhook-server/serving-certs"
)

// Self-managed certificates: the Secret in the operator namespace, and caBundle of the two
// webhook configurations the manifests install (update is limited to those names).
// +kubebuilder:rbac:groups="",namespace=enhanced-liveness-system,resources=secrets,verbs=get;list;watch;update
// +kubebuilder:rbac:groups=admissionregistration.k8s.io,resources=mutatingwebhookconfigurations;validatingwebhookconfigurations,verbs=get;list;watch
// +kubebuilder:rbac:groups=admissionregistration.k8s.io,resources=mutatingwebhookconfigurations,verbs=update,resourceNames=enhanced-liveness-operator-mutating-webhook-configuration
// +kubebuilder:rbac:groups=admissionregistration.k8s.io,resources=validatingwebhookconfigurations,verbs=update,resourceNames=enhanced-liveness-operator-validating-webhook-configuration

// ParseMode accepts the --cert-mode flag values.
func ParseMode(s string) (Mode, error) {
	switch Mode(s) {
	case ModeSelf, ModeOLM:
		return Mode(s), nil
	}
	return "", fmt.Errorf("unknown certificate mode %q (want %q or %q)", s, ModeSelf, ModeOLM)
}

// Options configure self-managed certificates. Durations left zero take the library defaults
// (CA 10 years, serving certificate 1 year, renewal 90 days ahead, checked every 12 hours).
type Options struct {
	Mode Mode
	// Namespace and SecretName locate the Secret holding ca.crt, ca.key, tls.crt and tls.key.
	Namespace  string
	SecretName string
	// ServiceName is the webhook Service; the certificate is issued for its DNS names.
	ServiceName string
	// CertDir is the webhook server's CertDir; the manager writes tls.crt and tls.key there.
	CertDir string
	// MutatingWebhook and ValidatingWebhook name the configurations whose caBundle is kept current.
	MutatingWebhook   string
	ValidatingWebhook string

	CADuration, ServerDuration, Lookahead, CheckFrequency time.Duration

	// ControllerName names the rotator's controller (metrics, logs); it must be unique per process.
	ControllerName string
}

// Validate reports missing settings for the selected mode.
func (o Options) Validate() error {
	if o.Mode == ModeOLM {
		return nil
	}
	if o.Mode != ModeSelf {
		return fmt.Errorf("unknown certificate mode %q", o.Mode)
	}
	var errs []error
	for name, v := range map[string]string{
		"namespace": o.Namespace, "secret name": o.SecretName, "service name": o.ServiceName,
		"certificate directory": o.CertDir,
	} {
		if v == "" {
			errs = append(errs, fmt.Errorf("self-managed certificates need a %s", name))
		}
	}
	if o.MutatingWebhook == "" && o.ValidatingWebhook == "" {
		errs = append(errs, errors.New("self-managed certificates need at least one webhook configuration name"))
	}
	return errors.Join(errs...)
}

// DNSNames are the names the serving certificate is valid for; the first is the one the API
// server uses to call a Service webhook.
func (o Options) DNSNames() []string {
	svc := o.ServiceName + "." + o.Namespace
	return []string{svc + ".svc", svc + ".svc.cluster.local", svc}
}

// Setup arranges for the serving certificate and closes ready once it is usable: in ModeSelf
// after the certificate files exist in CertDir and caBundle was injected, in ModeOLM at once.
// Rotation and the file writer run in every replica (not only the leader): each one serves
// webhooks.
func Setup(mgr ctrl.Manager, o Options, ready chan struct{}) error {
	if err := o.Validate(); err != nil {
		return err
	}
	if o.Mode == ModeOLM {
		close(ready)
		return nil
	}
	var hooks []rotator.WebhookInfo
	if o.MutatingWebhook != "" {
		hooks = append(hooks, rotator.WebhookInfo{Name: o.MutatingWebhook, Type: rotator.Mutating})
	}
	if o.ValidatingWebhook != "" {
		hooks = append(hooks, rotator.WebhookInfo{Name: o.ValidatingWebhook, Type: rotator.Validating})
	}
	dns := o.DNSNames()
	if o.ControllerName == "" {
		o.ControllerName = "webhook-cert-rotator"
	}
	// The writer fills CertDir from the Secret the rotator fills; the rotator waits for the files.
	if err := addCertWriter(mgr, o); err != nil {
		return err
	}
	return rotator.AddRotator(mgr, &rotator.CertRotator{
		SecretKey:              types.NamespacedName{Namespace: o.Namespace, Name: o.SecretName},
		CertDir:                o.CertDir,
		CertName:               CertFile,
		KeyName:                KeyFile,
		CAName:                 "enhanced-liveness-operator-ca",
		CAOrganization:         "enhanced-liveness-operator",
		DNSName:                dns[0],
		ExtraDNSNames:          dns[1:],
		IsReady:                ready,
		Webhooks:               hooks,
		FieldOwner:             ssa.FieldOwner,
		RequireLeaderElection:  false,
		EnableReadinessCheck:   true,
		CaCertDuration:         o.CADuration,
		ServerCertDuration:     o.ServerDuration,
		LookaheadInterval:      o.Lookahead,
		RotationCheckFrequency: o.CheckFrequency,
		ControllerName:         o.ControllerName,
	})
}

// GateServer returns a webhook server that starts serving only after ready is closed: the
// controller-runtime server fails at start when its certificate files do not exist yet.
// Its StartedChecker fails until then, which keeps the Pod unready while certificates are
// being issued.
func GateServer(s webhook.Server, ready <-chan struct{}) webhook.Server {
	return &gatedServer{Server: s, ready: ready}
}

type gatedServer struct {
	webhook.Server
	ready <-chan struct{}
}

func (g *gatedServer) Start(ctx context.Context) error {
	select {
	case <-g.ready:
	case <-ctx.Done():
		return nil
	}
	return g.Server.Start(ctx)
}
