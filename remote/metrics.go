package remote

import (
	"net/http"
	"strings"
	"time"

	pb "github.com/batonrl/baton/remote/proto/baton/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
)

// metricsPath is where a server with metrics serves them.
const metricsPath = "/metrics"

// serveMetrics answers GET /metrics with the registry of WithMetrics, to a scrape
// whose key the rule of WithMetricsKeys accepts.
func (s *Server) serveMetrics(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		http.Error(w, "GET /metrics", http.StatusMethodNotAllowed)
		return
	}
	keys := &s.cfg.keys
	if s.cfg.metricsKeys != nil {
		keys = s.cfg.metricsKeys
	}
	if !keys.Empty() && !metricsKeyOK(keys, r.Header) {
		w.Header().Set("WWW-Authenticate", `Bearer realm="baton metrics"`)
		http.Error(w, "metrics need an API key (Authorization: Bearer KEY)", http.StatusUnauthorized)
		return
	}
	s.cfg.metrics.Handler().ServeHTTP(w, r)
}

// metricsKeyOK reports whether the request presents one of keys, compared in
// constant time with every key.
func metricsKeyOK(keys *Keys, h http.Header) bool {
	md := metadata.MD{}
	if v := h.Values("Authorization"); len(v) > 0 {
		md.Set(authorizationHeader, v...)
	}
	if v := h.Values("X-Baton-Key"); len(v) > 0 {
		md.Set(keyHeader, v...)
	}
	presented, ok := presentedKey(md)
	if !ok {
		return false
	}
	g := keys.grantOf(presented)
	return g.any()
}

// shortName is a method's name without its service: "Act".
func shortName(fullMethod string) string {
	return fullMethod[strings.LastIndexByte(fullMethod, '/')+1:]
}

// rows is the first dimension of a tensor, 0 for none.
func rows(t *pb.Tensor) int {
	if sh := t.GetShape(); len(sh) > 0 {
		return int(sh[0])
	}
	return 0
}

// recordUnary records a unary call that began at start in the metrics: its
// latency and count for the act and step methods, its code when it failed.
// feedback is the number of feedback messages the request carried, read before the
// handler ran (a request's arrays go back to the codec after it).
func (s *Server) recordUnary(fullMethod string, start time.Time, feedback, acted int, resp any, err error) {
	m := s.cfg.metrics
	if m == nil {
		return
	}
	m.CountFeedback(feedback)
	if err != nil {
		m.CountError(fullMethod, status.Code(err).String())
		return
	}
	d := time.Since(start)
	switch fullMethod {
	case "/baton.v1." + methodAct:
		if acted > 0 {
			m.ObserveAct(shortName(fullMethod), d, acted)
		}
	case "/baton.v1." + methodActBatch:
		if r, ok := resp.(*pb.ActBatchResponse); ok {
			m.ObserveAct(shortName(fullMethod), d, rows(r.GetActions()))
		}
	case "/baton.v1." + methodStep:
		m.ObserveStep(shortName(fullMethod), d, 1)
	case "/baton.v1." + methodStepBatch:
		if r, ok := resp.(*pb.BatchTurn); ok {
			m.ObserveStep(shortName(fullMethod), d, rows(r.GetRewards()))
		}
	}
}

// requestCounts reads what a request holds for the metrics: its feedback messages
// and the actions asked for.
func requestCounts(req any) (feedback, acted int) {
	if r, ok := req.(*pb.ActRequest); ok {
		feedback = len(r.GetFeedback())
		if r.GetObservation() != nil {
			acted = 1
		}
	}
	return feedback, acted
}

// meteredStream times the answers of ActStream: from a request received to the
// answer sent, and counts the feedback the requests carry.
type meteredStream struct {
	grpc.ServerStream
	srv   *Server
	since time.Time
}

func (ms *meteredStream) RecvMsg(v any) error {
	err := ms.ServerStream.RecvMsg(v)
	if err == nil {
		ms.since = time.Now()
		fb, _ := requestCounts(v)
		ms.srv.cfg.metrics.CountFeedback(fb)
	}
	return err
}

func (ms *meteredStream) SendMsg(v any) error {
	err := ms.ServerStream.SendMsg(v)
	if err == nil && !ms.since.IsZero() {
		ms.srv.cfg.metrics.ObserveAct("ActStream", time.Since(ms.since), 1)
	}
	return err
}

// recordStream records a stream's failure in the metrics.
func (s *Server) recordStream(fullMethod string, err error) {
	if err == nil || s.cfg.metrics == nil {
		return
	}
	code := status.Code(err)
	if code == codes.OK {
		return
	}
	s.cfg.metrics.CountError(fullMethod, code.String())
}
