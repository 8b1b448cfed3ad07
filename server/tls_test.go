package server_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stepbox/stepbox/internal/testenv"
	"github.com/stepbox/stepbox/sandbox"
	"github.com/stepbox/stepbox/server"
	"github.com/stepbox/stepbox/server/client"
)

// TestTLS serves with a certificate from the configuration and runs a step
// over HTTPS with gRPC (HTTP/2 negotiated by ALPN) and with Connect; a
// client that does not trust the certificate is refused.
func TestTLS(t *testing.T) {
	certFile, keyFile, roots := selfSigned(t)
	cfg := server.Config{TLS: server.TLS{CertFile: certFile, KeyFile: keyFile}, Version: "test", Plans: slowLimits, Caps: slowLimits["default"]}
	eng, err := sandbox.New(cfg.EngineConfig())
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close(context.Background())
	cfg.Logger = server.NewLogger(&syncBuffer{}, 0)
	srv, err := server.New(eng, cfg)
	if err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(l) }()
	defer func() {
		ctx, cancel := context.WithTimeout(context.Background(), testenv.ScaleDuration(10*time.Second))
		defer cancel()
		srv.Shutdown(ctx)
		if err := <-served; !errors.Is(err, http.ErrServerClosed) {
			t.Errorf("Serve: %v", err)
		}
	}()
	url := "https://" + l.Addr().String()

	tr := &http.Transport{TLSClientConfig: &tls.Config{RootCAs: roots, MinVersion: tls.VersionTLS12}, ForceAttemptHTTP2: true}
	defer tr.CloseIdleConnections()
	hc := &http.Client{Transport: tr}
	for _, grpc := range []bool{true, false} {
		res, err := client.New(url, client.Options{GRPC: grpc, HTTPClient: hc}).Run(context.Background(), sandbox.Request{Code: "return 'over tls'"}, nil)
		if err != nil || string(res.Value) != `"over tls"` {
			t.Fatalf("grpc=%v: %s %v", grpc, res.Value, err)
		}
	}
	st, err := client.New(url, client.Options{GRPC: true, HTTPClient: hc}).Submit(context.Background(), sandbox.Request{Code: "return await dataProxy.request('x') + 1"})
	if err != nil {
		t.Fatal(err)
	}
	for ev := range st.Events() {
		if ev.DataRequest != nil {
			st.Respond(ev.DataRequest.ID, 41)
		}
	}
	if res, err := st.Wait(); err != nil || string(res.Value) != "42" {
		t.Fatalf("Execute over TLS: %s %v", res.Value, err)
	}

	// Without the certificate in its roots, the client refuses the server.
	utr := &http.Transport{ForceAttemptHTTP2: true}
	defer utr.CloseIdleConnections()
	untrusted := &http.Client{Transport: utr}
	if _, err := client.New(url, client.Options{HTTPClient: untrusted}).Run(context.Background(), sandbox.Request{Code: "return 1"}, nil); err == nil {
		t.Fatal("an untrusting client got an answer")
	}
	// Cleartext to the TLS port is not served.
	if resp, err := untrusted.Get("http://" + l.Addr().String() + "/healthz"); err == nil {
		resp.Body.Close()
		if resp.StatusCode == 200 {
			t.Fatal("cleartext HTTP served on the TLS port")
		}
	}
}

// selfSigned writes a certificate for 127.0.0.1 and its key as PEM files.
func selfSigned(t *testing.T) (certFile, keyFile string, roots *x509.CertPool) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1),
		Subject:      pkix.Name{CommonName: "stepbox test"},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(time.Hour),
		IPAddresses:  []net.IP{net.IPv4(127, 0, 0, 1)},
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		IsCA:         true, BasicConstraintsValid: true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	kb, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	certFile, keyFile = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	if err := os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kb}), 0o600); err != nil {
		t.Fatal(err)
	}
	cert, _ := x509.ParseCertificate(der)
	roots = x509.NewCertPool()
	roots.AddCert(cert)
	return certFile, keyFile, roots
}
