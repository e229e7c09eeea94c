// Command pki writes the certificates, keys and kubeconfigs of the local cluster that
// hack/local-cluster/up.sh starts: one CA, the apiserver's serving certificate, a serving and a
// client certificate per node's kubelet, a client certificate per control-plane component and
// kube-proxy (with the user and group names the bootstrap RBAC policy and the Node authorizer
// expect), the service-account key pair, and a kubeconfig per client.
package main

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"flag"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strings"
	"time"

	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

type keyPair struct {
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
}

// nodeFlags collects the repeated -node NAME=IP flags.
type nodeFlags []node

type node struct {
	name string
	ip   net.IP
}

func (n *nodeFlags) String() string { return fmt.Sprint(*n) }

func (n *nodeFlags) Set(v string) error {
	name, ip, ok := strings.Cut(v, "=")
	if !ok || name == "" || net.ParseIP(ip) == nil {
		return fmt.Errorf("-node %q: want NAME=IP", v)
	}
	*n = append(*n, node{name: name, ip: net.ParseIP(ip)})
	return nil
}

func main() {
	dir := flag.String("dir", "", "output directory")
	var nodes nodeFlags
	flag.Var(&nodes, "node", "a node's NAME=IP (repeated): its kubelet's serving certificate and client kubeconfig")
	apiserverIP := flag.String("apiserver-ip", "", "the API server's address (in its serving certificate)")
	serviceIP := flag.String("service-ip", "10.96.0.1", "ClusterIP of the kubernetes Service")
	server := flag.String("server", "", "apiserver URL written into the kubeconfigs")
	flag.Parse()
	if *dir == "" || len(nodes) == 0 || *apiserverIP == "" || *server == "" {
		fmt.Fprintln(os.Stderr, "usage: pki -dir DIR -node NAME=IP [-node NAME=IP...] -apiserver-ip IP -server URL [-service-ip IP]")
		os.Exit(2)
	}
	if err := run(*dir, nodes, net.ParseIP(*apiserverIP), net.ParseIP(*serviceIP), *server); err != nil {
		fmt.Fprintln(os.Stderr, "pki:", err)
		os.Exit(1)
	}
}

func run(dir string, nodes []node, apiserverIP, serviceIP net.IP, server string) error {
	if apiserverIP == nil || serviceIP == nil {
		return fmt.Errorf("invalid apiserver or service IP")
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	ca, err := newCert("local-cluster-ca", nil, nil, nil, nil)
	if err != nil {
		return err
	}
	if err := writePair(dir, "ca", ca); err != nil {
		return err
	}
	loopback := net.ParseIP("127.0.0.1")
	apiserver, err := newCert("apiserver", nil, []string{"kubernetes", "kubernetes.default", "kubernetes.default.svc",
		"kubernetes.default.svc.cluster.local", "localhost", nodes[0].name}, []net.IP{loopback, apiserverIP, serviceIP}, ca)
	if err != nil {
		return err
	}
	if err := writePair(dir, "apiserver", apiserver); err != nil {
		return err
	}
	type clientCert struct{ file, cn, org string }
	clients := []clientCert{
		{"admin", "local-cluster-admin", "system:masters"},
		{"apiserver-kubelet-client", "kube-apiserver-kubelet-client", "system:masters"},
		{"controller-manager", "system:kube-controller-manager", ""},
		{"scheduler", "system:kube-scheduler", ""},
		{"kube-proxy", "system:kube-proxy", ""},
	}
	for _, n := range nodes {
		kp, err := newCert(n.name, nil, []string{n.name, "localhost"}, []net.IP{loopback, n.ip}, ca)
		if err != nil {
			return err
		}
		if err := writePair(dir, "kubelet-"+n.name, kp); err != nil {
			return err
		}
		// The Node authorizer and NodeRestriction know a kubelet by this user and group.
		clients = append(clients, clientCert{"kubelet-client-" + n.name, "system:node:" + n.name, "system:nodes"})
	}
	for _, c := range clients {
		var orgs []string
		if c.org != "" {
			orgs = []string{c.org}
		}
		kp, err := newCert(c.cn, orgs, nil, nil, ca)
		if err != nil {
			return err
		}
		if err := writePair(dir, c.file, kp); err != nil {
			return err
		}
		if c.file == "apiserver-kubelet-client" {
			continue
		}
		if err := writeKubeconfig(filepath.Join(dir, c.file+".kubeconfig"), server, c.cn, ca, kp); err != nil {
			return err
		}
	}
	return writeServiceAccountKeys(dir)
}

func writeServiceAccountKeys(dir string) error {
	sa, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return err
	}
	keyDER, err := x509.MarshalECPrivateKey(sa)
	if err != nil {
		return err
	}
	pubDER, err := x509.MarshalPKIXPublicKey(&sa.PublicKey)
	if err != nil {
		return err
	}
	if err := writePEM(filepath.Join(dir, "sa.key"), "EC PRIVATE KEY", keyDER); err != nil {
		return err
	}
	return writePEM(filepath.Join(dir, "sa.pub"), "PUBLIC KEY", pubDER)
}

// newCert makes a certificate signed by parent, or a self-signed CA when parent is nil. Client
// certificates have neither DNS names nor IPs; serving certificates have both usages so the
// kubelet certificate also works as a client one if ever needed.
func newCert(cn string, orgs, dns []string, ips []net.IP, parent *keyPair) (*keyPair, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 62))
	if err != nil {
		return nil, err
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber: serial,
		Subject:      pkix.Name{CommonName: cn, Organization: orgs},
		NotBefore:    now.Add(-time.Hour),
		NotAfter:     now.Add(365 * 24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth, x509.ExtKeyUsageServerAuth},
		DNSNames:     dns,
		IPAddresses:  ips,
	}
	signerCert, signerKey := tmpl, key
	if parent == nil {
		tmpl.IsCA = true
		tmpl.BasicConstraintsValid = true
		tmpl.KeyUsage = x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature
		tmpl.ExtKeyUsage = nil
	} else {
		signerCert, signerKey = parent.cert, parent.key
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, signerCert, &key.PublicKey, signerKey)
	if err != nil {
		return nil, err
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, err
	}
	return &keyPair{cert: cert, key: key}, nil
}

func writePair(dir, name string, kp *keyPair) error {
	keyDER, err := x509.MarshalECPrivateKey(kp.key)
	if err != nil {
		return err
	}
	if err := writePEM(filepath.Join(dir, name+".crt"), "CERTIFICATE", kp.cert.Raw); err != nil {
		return err
	}
	return writePEM(filepath.Join(dir, name+".key"), "EC PRIVATE KEY", keyDER)
}

func writePEM(path, typ string, der []byte) error {
	return os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600)
}

func writeKubeconfig(path, server, user string, ca, kp *keyPair) error {
	keyDER, err := x509.MarshalECPrivateKey(kp.key)
	if err != nil {
		return err
	}
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["local"] = &clientcmdapi.Cluster{
		Server:                   server,
		CertificateAuthorityData: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: ca.cert.Raw}),
	}
	cfg.AuthInfos[user] = &clientcmdapi.AuthInfo{
		ClientCertificateData: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: kp.cert.Raw}),
		ClientKeyData:         pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}),
	}
	cfg.Contexts["local"] = &clientcmdapi.Context{Cluster: "local", AuthInfo: user}
	cfg.CurrentContext = "local"
	return clientcmd.WriteToFile(*cfg, path)
}
