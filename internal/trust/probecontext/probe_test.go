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

package probecontext

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"

	appsv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/apps/v1alpha1"
)

var annPath = field.NewPath("metadata", "annotations").Key(appsv1alpha1.AnnotationProbeContext)

func TestDecode(t *testing.T) {
	cases := []struct {
		name    string
		in      string
		want    []string // container names on success
		wantErr string   // substring of the aggregated error
	}{
		{name: "empty array", in: `[]`, want: nil},
		{name: "two entries", in: `[{"name":"a","livenessProbe":{"tcpSocket":{"port":80}}},{"name":"b","livenessProbe":{"exec":{"command":["true"]}}}]`, want: []string{"a", "b"}},
		{name: "surrounding whitespace", in: " \n[{\"name\":\"a\",\"livenessProbe\":{\"grpc\":{\"port\":9}}}] ", want: []string{"a"}},
		{name: "not JSON", in: `{{`, wantErr: "must be a JSON array"},
		{name: "object not array", in: `{"name":"a"}`, wantErr: "must be a JSON array"},
		{name: "empty string", in: ``, wantErr: "must be a JSON array"},
		{name: "truncated", in: `[{"name":"a"`, wantErr: "malformed JSON"},
		{name: "wrong type", in: `[{"name":1}]`, wantErr: "malformed JSON"},
		{name: "unknown field", in: `[{"name":"a","livenessProbe":{"exec":{"command":["x"]},"periodSecond":3}}]`, wantErr: `unknown field "[0].livenessProbe.periodSecond"`},
		{name: "duplicate JSON field", in: `[{"name":"a","name":"b","livenessProbe":{"exec":{"command":["x"]}}}]`, wantErr: `duplicate field "[0].name"`},
		{name: "missing name", in: `[{"livenessProbe":{"exec":{"command":["x"]}}}]`, wantErr: "[0].name: Required value"},
		{name: "missing probe", in: `[{"name":"a"}]`, wantErr: "[0].livenessProbe: Required value"},
		{name: "null probe", in: `[{"name":"a","livenessProbe":null}]`, wantErr: "[0].livenessProbe: Required value"},
		{name: "duplicate container", in: `[{"name":"a","livenessProbe":{"exec":{"command":["x"]}}},{"name":"a","livenessProbe":{"exec":{"command":["y"]}}}]`, wantErr: `[1].name: Duplicate value: "a"`},
		{name: "too large", in: `[` + strings.Repeat(" ", MaxAnnotationBytes) + `]`, wantErr: "may not be more than 65536 bytes"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, errs := Decode([]byte(tc.in), annPath)
			if tc.wantErr != "" {
				if len(errs) == 0 {
					t.Fatalf("no error, want %q", tc.wantErr)
				}
				if agg := errs.ToAggregate().Error(); !strings.Contains(agg, tc.wantErr) {
					t.Fatalf("error %q does not contain %q", agg, tc.wantErr)
				}
				if !strings.HasPrefix(errs[0].Field, annPath.String()) {
					t.Fatalf("error field %q not under %q", errs[0].Field, annPath)
				}
				return
			}
			if len(errs) > 0 {
				t.Fatalf("unexpected errors: %v", errs.ToAggregate())
			}
			var names []string
			for _, e := range got {
				names = append(names, e.Name)
			}
			if strings.Join(names, ",") != strings.Join(tc.want, ",") {
				t.Fatalf("names %v, want %v", names, tc.want)
			}
		})
	}
}

func TestEncodeRoundTrip(t *testing.T) {
	in := []ContainerProbe{
		{Name: "web", LivenessProbe: &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{
			Path: "/healthz", Port: intstr.FromString("http"), HTTPHeaders: []corev1.HTTPHeader{{Name: "X-A", Value: "1"}}}},
			PeriodSeconds: 5, TerminationGracePeriodSeconds: ptr.To[int64](7)}},
		{Name: "side", LivenessProbe: &corev1.Probe{ProbeHandler: corev1.ProbeHandler{GRPC: &corev1.GRPCAction{Port: 9000, Service: ptr.To("svc")}}}},
	}
	s, err := Encode(in)
	if err != nil {
		t.Fatal(err)
	}
	out, errs := Decode([]byte(s), annPath)
	if len(errs) > 0 {
		t.Fatalf("decode of encoded value: %v", errs.ToAggregate())
	}
	s2, _ := Encode(out)
	if s != s2 {
		t.Fatalf("round trip changed the value:\n%s\n%s", s, s2)
	}
	if _, err := Encode([]ContainerProbe{{Name: strings.Repeat("x", MaxAnnotationBytes), LivenessProbe: &corev1.Probe{}}}); err == nil {
		t.Fatal("Encode accepted a value over the size limit")
	}
}

func TestFromAnnotationsPrefersOurKey(t *testing.T) {
	ours := `[{"name":"a","livenessProbe":{"tcpSocket":{"port":1}}}]`
	kruise := `[{"name":"b","livenessProbe":{"tcpSocket":{"port":2}}}]`
	ctx, errs := FromAnnotations(map[string]string{
		appsv1alpha1.AnnotationProbeContext: ours, appsv1alpha1.AnnotationKruiseProbeContext: kruise})
	if len(errs) > 0 || ctx.Key != appsv1alpha1.AnnotationProbeContext || ctx.Lookup("a") == nil || ctx.Lookup("b") != nil {
		t.Fatalf("got %+v %v", ctx, errs)
	}
	ctx, errs = FromAnnotations(map[string]string{appsv1alpha1.AnnotationKruiseProbeContext: kruise})
	if len(errs) > 0 || ctx.Key != appsv1alpha1.AnnotationKruiseProbeContext || ctx.Lookup("b") == nil {
		t.Fatalf("got %+v %v", ctx, errs)
	}
	ctx, errs = FromAnnotations(nil)
	if len(errs) > 0 || ctx.Key != "" || len(ctx.Entries) != 0 {
		t.Fatalf("got %+v %v", ctx, errs)
	}
	_, errs = FromAnnotations(map[string]string{appsv1alpha1.AnnotationKruiseProbeContext: "nope"})
	if len(errs) != 1 || !strings.Contains(errs[0].Field, appsv1alpha1.AnnotationKruiseProbeContext) {
		t.Fatalf("want one error on the kruise key, got %v", errs)
	}
}

func TestSetDefaults(t *testing.T) {
	p := &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Port: intstr.FromInt32(80)}}}
	SetDefaults(p)
	if p.TimeoutSeconds != 1 || p.PeriodSeconds != 10 || p.SuccessThreshold != 1 || p.FailureThreshold != 3 ||
		p.InitialDelaySeconds != 0 || p.HTTPGet.Path != "/" || p.HTTPGet.Scheme != corev1.URISchemeHTTP {
		t.Fatalf("defaults not applied: %+v %+v", p, p.HTTPGet)
	}
	q := &corev1.Probe{TimeoutSeconds: 4, PeriodSeconds: 7, SuccessThreshold: 2, FailureThreshold: 9, InitialDelaySeconds: 3,
		ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/x", Scheme: corev1.URISchemeHTTPS}}}
	SetDefaults(q)
	if q.TimeoutSeconds != 4 || q.PeriodSeconds != 7 || q.SuccessThreshold != 2 || q.FailureThreshold != 9 ||
		q.InitialDelaySeconds != 3 || q.HTTPGet.Path != "/x" || q.HTTPGet.Scheme != corev1.URISchemeHTTPS {
		t.Fatalf("explicit values overwritten: %+v", q)
	}
}

func TestValidateLiveness(t *testing.T) {
	ctr := &corev1.Container{Name: "web", Ports: []corev1.ContainerPort{{Name: "http", ContainerPort: 8080}}}
	path := field.NewPath("spec", "containers").Index(0).Child("livenessProbe")
	httpGet := func(port intstr.IntOrString) corev1.ProbeHandler {
		return corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/", Port: port, Scheme: corev1.URISchemeHTTP}}
	}
	exec := corev1.ProbeHandler{Exec: &corev1.ExecAction{Command: []string{"true"}}}
	cases := []struct {
		name  string
		probe corev1.Probe
		want  []string // each a complete field error string, in order
	}{
		{name: "valid http named port", probe: corev1.Probe{ProbeHandler: httpGet(intstr.FromString("http"))}},
		{name: "valid grpc", probe: corev1.Probe{ProbeHandler: corev1.ProbeHandler{GRPC: &corev1.GRPCAction{Port: 50051}}}},
		{name: "valid tcp", probe: corev1.Probe{ProbeHandler: corev1.ProbeHandler{TCPSocket: &corev1.TCPSocketAction{Port: intstr.FromInt32(22)}}}},
		{name: "no handler", want: []string{"spec.containers[0].livenessProbe: Required value: must specify a handler type"}},
		{name: "two handlers", probe: corev1.Probe{ProbeHandler: corev1.ProbeHandler{Exec: exec.Exec,
			TCPSocket: &corev1.TCPSocketAction{Port: intstr.FromInt32(1)}}},
			want: []string{"spec.containers[0].livenessProbe.tcpSocket: Forbidden: may not specify more than 1 handler type"}},
		{name: "empty command", probe: corev1.Probe{ProbeHandler: corev1.ProbeHandler{Exec: &corev1.ExecAction{}}},
			want: []string{"spec.containers[0].livenessProbe.exec.command: Required value"}},
		{name: "negative values", probe: corev1.Probe{ProbeHandler: exec, InitialDelaySeconds: -1, TimeoutSeconds: -2, PeriodSeconds: -3, FailureThreshold: -4},
			want: []string{
				"spec.containers[0].livenessProbe.initialDelaySeconds: Invalid value: -1: must be greater than or equal to 0",
				"spec.containers[0].livenessProbe.timeoutSeconds: Invalid value: -2: must be greater than or equal to 0",
				"spec.containers[0].livenessProbe.periodSeconds: Invalid value: -3: must be greater than or equal to 0",
				"spec.containers[0].livenessProbe.failureThreshold: Invalid value: -4: must be greater than or equal to 0",
			}},
		{name: "success threshold", probe: corev1.Probe{ProbeHandler: exec, SuccessThreshold: 2},
			want: []string{"spec.containers[0].livenessProbe.successThreshold: Invalid value: 2: must be 1"}},
		{name: "grace zero", probe: corev1.Probe{ProbeHandler: exec, TerminationGracePeriodSeconds: ptr.To[int64](0)},
			want: []string{"spec.containers[0].livenessProbe.terminationGracePeriodSeconds: Invalid value: 0: must be greater than 0"}},
		{name: "port zero", probe: corev1.Probe{ProbeHandler: httpGet(intstr.FromInt32(0))},
			want: []string{"spec.containers[0].livenessProbe.httpGet.port: Invalid value: 0: must be between 1 and 65535, inclusive"}},
		{name: "port too big", probe: corev1.Probe{ProbeHandler: corev1.ProbeHandler{GRPC: &corev1.GRPCAction{Port: 70000}}},
			want: []string{"spec.containers[0].livenessProbe.grpc.port: Invalid value: 70000: must be between 1 and 65535, inclusive"}},
		{name: "bad port name", probe: corev1.Probe{ProbeHandler: corev1.ProbeHandler{TCPSocket: &corev1.TCPSocketAction{Port: intstr.FromString("Bad--name")}}},
			want: []string{
				`spec.containers[0].livenessProbe.tcpSocket.port: Invalid value: "Bad--name": must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)`,
				`spec.containers[0].livenessProbe.tcpSocket.port: Invalid value: "Bad--name": must not contain consecutive hyphens`,
			}},
		{name: "unknown named port", probe: corev1.Probe{ProbeHandler: httpGet(intstr.FromString("metrics"))},
			want: []string{`spec.containers[0].livenessProbe.httpGet.port: Invalid value: "metrics": must be the name of a port of container "web"`}},
		{name: "bad scheme", probe: corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/", Port: intstr.FromInt32(1), Scheme: "FTP"}}},
			want: []string{`spec.containers[0].livenessProbe.httpGet.scheme: Unsupported value: "FTP": supported values: "HTTP", "HTTPS"`}},
		{name: "bad header", probe: corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/", Port: intstr.FromInt32(1), Scheme: "HTTP",
			HTTPHeaders: []corev1.HTTPHeader{{Name: "X_Bad"}, {Name: "Ok-1", Value: ""}, {Name: "Ok-1", Value: "again"}}}}},
			want: []string{`spec.containers[0].livenessProbe.httpGet.httpHeaders: Invalid value: "X_Bad": a valid HTTP header must consist of alphanumeric characters or '-' (e.g. 'X-Header-Name', regex used for validation is '[-A-Za-z0-9]+')`}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := tc.probe.DeepCopy()
			if p.SuccessThreshold == 0 {
				p.SuccessThreshold = 1
			}
			errs := ValidateLiveness(p, ctr, path)
			var got []string
			for _, e := range errs {
				got = append(got, e.Error())
			}
			if strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
				t.Fatalf("errors:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tc.want, "\n"))
			}
		})
	}
}

func TestResolve(t *testing.T) {
	ctr := &corev1.Container{Name: "web", Ports: []corev1.ContainerPort{{Name: "http", ContainerPort: 8080}, {Name: "admin", ContainerPort: 9090}}}
	in := &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Port: intstr.FromString("admin")}}}
	out, err := Resolve(in, ctr)
	if err != nil {
		t.Fatal(err)
	}
	if out.HTTPGet.Port != intstr.FromInt32(9090) || out.PeriodSeconds != 10 || out.HTTPGet.Path != "/" {
		t.Fatalf("not resolved/defaulted: %+v", out)
	}
	if in.HTTPGet.Port.Type != intstr.String || in.PeriodSeconds != 0 {
		t.Fatal("Resolve modified its input")
	}
	tcp := &corev1.Probe{ProbeHandler: corev1.ProbeHandler{TCPSocket: &corev1.TCPSocketAction{Port: intstr.FromString("http")}}}
	if out, err := Resolve(tcp, ctr); err != nil || out.TCPSocket.Port != intstr.FromInt32(8080) {
		t.Fatalf("tcp: %v %+v", err, out)
	}
	missing := &corev1.Probe{ProbeHandler: corev1.ProbeHandler{TCPSocket: &corev1.TCPSocketAction{Port: intstr.FromString("nope")}}}
	if _, err := Resolve(missing, ctr); err == nil || !strings.Contains(err.Error(), `no port named "nope"`) {
		t.Fatalf("want missing-port error, got %v", err)
	}
}
