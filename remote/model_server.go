package remote

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"

	"github.com/batonrl/baton/models"
	pb "github.com/batonrl/baton/remote/proto/baton/v1"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// modelService implements ModelService over a registry.
type modelService struct {
	pb.UnimplementedModelServiceServer
	reg      *models.Registry
	draining <-chan struct{} // closed when the server shuts down: watches end
}

// AddModels serves the models of reg on the server (ModelService): clients put,
// get, list and watch versions by name. With keys, a call needs a key that grants
// the model's name; List shows the models the key grants.
func (s *Server) AddModels(reg *models.Registry) error {
	if reg == nil {
		return fmt.Errorf("%w: AddModels: nil registry", ErrConfig)
	}
	svc := &modelService{reg: reg, draining: s.draining}
	return s.register(&pb.ModelService_ServiceDesc, svc, svc.scope, nil)
}

// ServeModels serves the models of reg on lis until ctx is done (see Server.Serve).
func ServeModels(ctx context.Context, lis net.Listener, reg *models.Registry, opts ...ServerOption) error {
	s, err := NewServer(opts...)
	if err != nil {
		_ = lis.Close()
		return err
	}
	if err := s.AddModels(reg); err != nil {
		_ = lis.Close()
		return err
	}
	return s.Serve(ctx, lis)
}

// scope names the model a request addresses; List of every model names none and
// is filtered by the handler.
func (m *modelService) scope(_ string, req any) ([]string, error) {
	type namer interface{ GetName() string }
	if r, ok := req.(namer); ok && r.GetName() != "" {
		return []string{r.GetName()}, nil
	}
	return nil, nil
}

// modelStatus turns an error of the registry into a status.
func modelStatus(err error) error {
	var inv *models.InvalidError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &inv):
		return invalid(&FieldError{Field: inv.Field, Reason: fmt.Sprintf("%q: %s", inv.Value, inv.Reason)})
	case errors.Is(err, models.ErrNotFound):
		return status.Error(codes.NotFound, err.Error())
	case errors.Is(err, models.ErrCorrupt):
		return status.Error(codes.DataLoss, err.Error())
	case errors.Is(err, models.ErrSpaces):
		return status.Error(codes.FailedPrecondition, err.Error())
	}
	return statusOf(err, codes.Internal, "models")
}

func modelInfo(m models.Meta) (*pb.ModelInfo, error) {
	js, err := json.Marshal(m)
	if err != nil {
		return nil, status.Errorf(codes.Internal, "models: %s: %v", m.Ref(), err)
	}
	return &pb.ModelInfo{Name: m.Name, Version: int64(m.Version), Sha256: m.SHA256, Size: m.Size, MetaJson: string(js)}, nil
}

func (m *modelService) Put(ctx context.Context, req *pb.PutModelRequest) (*pb.ModelInfo, error) {
	var meta models.Meta
	if req.GetMetaJson() != "" {
		if err := json.Unmarshal([]byte(req.GetMetaJson()), &meta); err != nil {
			return nil, invalid(fieldErrorf("meta_json", "%v", err))
		}
	}
	if meta.Name != "" && meta.Name != req.GetName() {
		return nil, invalid(fieldErrorf("meta_json", "names model %q, the request %q", meta.Name, req.GetName()))
	}
	meta.Name = req.GetName()
	if want := req.GetDataSha256(); want != "" {
		check := models.Meta{Name: meta.Name, SHA256: want, Size: int64(len(req.GetData()))}
		if err := check.Verify(req.GetData()); err != nil {
			return nil, status.Errorf(codes.DataLoss, "data: %v", err)
		}
	}
	got, err := m.reg.Put(ctx, meta, req.GetData())
	if err != nil {
		return nil, modelStatus(err)
	}
	return modelInfo(got)
}

func (m *modelService) Get(ctx context.Context, req *pb.GetModelRequest) (*pb.GetModelResponse, error) {
	if req.GetVersion() < 0 {
		return nil, invalid(fieldErrorf("version", "%d: want 0 (the newest) or a version from 1", req.GetVersion()))
	}
	var (
		meta models.Meta
		data []byte
		err  error
	)
	if req.GetMetaOnly() {
		meta, err = m.reg.Stat(ctx, req.GetName(), int(req.GetVersion()))
	} else {
		meta, data, err = m.reg.Get(ctx, req.GetName(), int(req.GetVersion()))
	}
	if err != nil {
		return nil, modelStatus(err)
	}
	info, err := modelInfo(meta)
	if err != nil {
		return nil, err
	}
	return &pb.GetModelResponse{Model: info, Data: data}, nil
}

func (m *modelService) List(ctx context.Context, req *pb.ListModelsRequest) (*pb.ListModelsResponse, error) {
	all, err := m.reg.List(ctx, req.GetName())
	if err != nil {
		return nil, modelStatus(err)
	}
	g, _ := ctx.Value(grantKey{}).(*grant)
	resp := &pb.ListModelsResponse{}
	for _, meta := range all {
		if g != nil && !g.open && !g.allows(meta.Name) {
			continue
		}
		info, err := modelInfo(meta)
		if err != nil {
			return nil, err
		}
		resp.Models = append(resp.Models, info)
	}
	return resp, nil
}

func (m *modelService) Watch(req *pb.WatchModelRequest, stream pb.ModelService_WatchServer) error {
	if req.GetAfter() < 0 {
		return invalid(fieldErrorf("after", "%d: want 0 or a version", req.GetAfter()))
	}
	after := int(req.GetAfter())
	ctx, cancel := context.WithCancel(stream.Context())
	defer cancel()
	go func() {
		select {
		case <-m.draining:
			cancel()
		case <-ctx.Done():
		}
	}()
	for {
		meta, err := m.reg.Wait(ctx, req.GetName(), after)
		if err != nil && stream.Context().Err() == nil && ctx.Err() != nil {
			return nil // the server is shutting down
		}
		if err != nil {
			return modelStatus(err)
		}
		info, err := modelInfo(meta)
		if err != nil {
			return err
		}
		if err := stream.Send(info); err != nil {
			return err
		}
		after = meta.Version
	}
}
