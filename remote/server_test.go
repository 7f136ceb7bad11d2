package remote_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/batonrl/baton/agent"
	"github.com/batonrl/baton/env"
	"github.com/batonrl/baton/remote"
	pb "github.com/batonrl/baton/remote/proto/baton/v1"
	"github.com/batonrl/baton/spaces"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc"
)

// selfSigned writes a self-signed certificate for 127.0.0.1 and its key as PEM files
// in dir and returns their paths.
func selfSigned(t *testing.T, dir, name string) (certFile, keyFile string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: name},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(time.Hour),
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true,
		IsCA:                  true,
		IPAddresses:           []net.IP{net.ParseIP("127.0.0.1")},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	require.NoError(t, err)
	kder, err := x509.MarshalECPrivateKey(key)
	require.NoError(t, err)
	certFile, keyFile = filepath.Join(dir, name+".crt"), filepath.Join(dir, name+".key")
	require.NoError(t, os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600))
	require.NoError(t, os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kder}), 0o600))
	return certFile, keyFile
}

// TestTLS serves over TLS with a self-signed certificate: a client that trusts it
// acts, a plaintext client and one that trusts another certificate cannot connect,
// and the plaintext client is told why.
func TestTLS(t *testing.T) {
	dir := t.TempDir()
	cert, key := selfSigned(t, dir, "server")
	other, _ := selfSigned(t, dir, "other")
	scfg, err := remote.ServerTLS(cert, key)
	require.NoError(t, err)
	srv := serveAgents(t, true, []remote.Agent{oracleAgent(t)}, remote.WithTLS(scfg))

	ccfg, err := remote.ClientTLS(cert)
	require.NoError(t, err)
	c, err := remote.DialAgent(t.Context(), "grpcs://"+srv.target+"/strategy", remote.WithTLS(ccfg))
	require.NoError(t, err)
	defer c.Close()
	obs, masks := strategyObservations(t, 3)
	_, err = c.Act(t.Context(), obs[0], masks[0])
	require.NoError(t, err)

	_, err = remote.DialAgent(t.Context(), "grpc://"+srv.target, remote.WithTimeout(2*time.Second))
	require.ErrorIs(t, err, remote.ErrUnavailable, "plaintext to a TLS server")
	assert.Contains(t, err.Error(), "this port speaks TLS: dial it with TLS (grpcs://), not plaintext")
	wrong, err := remote.ClientTLS(other)
	require.NoError(t, err)
	_, err = remote.DialAgent(t.Context(), "grpcs://"+srv.target, remote.WithTLS(wrong), remote.WithTimeout(2*time.Second))
	require.ErrorIs(t, err, remote.ErrUnavailable, "a certificate the client does not trust")
	assert.Contains(t, err.Error(), "certificate")

	_, err = remote.ServerTLS(filepath.Join(dir, "missing.crt"), key)
	require.ErrorIs(t, err, remote.ErrConfig)
	_, err = remote.ClientTLS(key)
	require.ErrorIs(t, err, remote.ErrConfig, "a key file holds no certificate")
}

// TestShutdown shuts servers down: an idle stream does not hold the shutdown up, a
// call in flight finishes, and after the shutdown calls fail with ErrUnavailable.
func TestShutdown(t *testing.T) {
	g := newGate()
	spec := env.Spec{Name: "gate", ObservationSpace: spaces.Must(spaces.NewBox([]int{1}, -1, 1)), ActionSpace: spaces.Discrete{N: 2}}
	srv := serveAgents(t, true, []remote.Agent{{Spec: spec, Policy: g, Concurrent: true}}, remote.WithGracePeriod(time.Minute))

	idle := dialAgent(t, srv) // its stream stays open after its first call
	busy := dialAgent(t, srv)
	errc := make(chan error, 2)
	go func() { _, err := idle.Act(t.Context(), []float32{0}, nil); errc <- err }()
	<-g.entered
	g.release <- struct{}{}
	require.NoError(t, <-errc)

	go func() { _, err := busy.Act(t.Context(), []float32{0}, nil); errc <- err }()
	<-g.entered
	stopped := make(chan error, 1)
	go func() { stopped <- srv.stop() }()
	// The call in flight finishes even though the server is shutting down.
	g.release <- struct{}{}
	require.NoError(t, <-errc)
	// The idle stream is closed without waiting for the grace period.
	select {
	case err := <-stopped:
		require.NoError(t, err)
	case <-time.After(30 * time.Second):
		t.Fatal("the shutdown waits for an idle stream")
	}
	_, err := idle.Act(t.Context(), []float32{0}, nil)
	require.ErrorIs(t, err, remote.ErrUnavailable)
}

// actOnly is an agent server written elsewhere that has only Spec and Act.
type actOnly struct {
	pb.UnimplementedAgentServiceServer
	spec *pb.AgentSpec
}

func (a *actOnly) Spec(context.Context, *pb.AgentSpecRequest) (*pb.AgentSpec, error) {
	return a.spec, nil
}

func (a *actOnly) Act(context.Context, *pb.ActRequest) (*pb.ActResponse, error) {
	return &pb.ActResponse{Action: &pb.Tensor{Dtype: pb.DType_DTYPE_INT64, Shape: []int64{1}, Data: []byte{1, 0, 0, 0, 0, 0, 0, 0}}}, nil
}

// TestUnaryFallback talks to a server without ActStream: the client falls back to
// Act. A server whose answers do not fit the agent's space is an ErrMismatch.
func TestUnaryFallback(t *testing.T) {
	spec := env.Spec{Name: "plain", ObservationSpace: spaces.Must(spaces.NewBox([]int{1}, -1, 1)), ActionSpace: spaces.Discrete{N: 2}}
	sp, err := remote.AgentSpecProto(spec)
	require.NoError(t, err)
	sp.ObservationSpace, sp.ActionSpace = nil, nil // the JSON form only, as a Python server may send
	gs := grpc.NewServer()
	pb.RegisterAgentServiceServer(gs, &actOnly{spec: sp})
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	go func() { _ = gs.Serve(lis) }()
	defer gs.Stop()

	c, err := remote.DialAgent(t.Context(), lis.Addr().String())
	require.NoError(t, err)
	defer c.Close()
	assert.True(t, c.Spec().ActionSpace.Equal(spaces.Discrete{N: 2}))
	for range 2 {
		got, err := c.Act(t.Context(), []float32{0}, nil)
		require.NoError(t, err)
		assert.Equal(t, agent.Discrete(1), got)
	}

	sp.ActionSpaceJson = `{"type":"discrete","n":1}`
	c2, err := remote.DialAgent(t.Context(), lis.Addr().String())
	require.NoError(t, err)
	defer c2.Close()
	_, err = c2.Act(t.Context(), []float32{0}, nil)
	require.ErrorIs(t, err, remote.ErrMismatch)
	assert.Contains(t, err.Error(), "the response's action: spaces: value outside Discrete(1): 1 is above the high bound 0")
}
