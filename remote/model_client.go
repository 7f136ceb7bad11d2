package remote

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/batonrl/baton/models"
	pb "github.com/batonrl/baton/remote/proto/baton/v1"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// The methods of ModelService, as errors name them.
const (
	methodModelPut   = "ModelService/Put"
	methodModelGet   = "ModelService/Get"
	methodModelList  = "ModelService/List"
	methodModelWatch = "ModelService/Watch"
)

// ModelClient is a client of a model server: a models.Store over the network, which
// can wait for new versions as a models.Registry does. Its errors are *CallError
// values that match, besides remote's sentinels, models.ErrNotFound (NOT_FOUND),
// models.ErrCorrupt (DATA_LOSS) and models.ErrInvalid (INVALID_ARGUMENT). It is safe
// for concurrent use; Close closes the connection.
type ModelClient struct {
	c   *conn
	api pb.ModelServiceClient
}

var _ models.Store = (*ModelClient)(nil)

// DialModels connects to the model server at target and lists its models, under the
// call deadline, so that a wrong address or key fails now.
func DialModels(ctx context.Context, target string, opts ...DialOption) (*ModelClient, error) {
	c, _, err := dial(ctx, target, opts)
	if err != nil {
		return nil, err
	}
	m := &ModelClient{c: c, api: pb.NewModelServiceClient(c.cc)}
	if _, err := m.List(ctx, ""); err != nil {
		_ = c.close()
		return nil, err
	}
	return m, nil
}

// Close closes the connection.
func (m *ModelClient) Close() error { return m.c.close() }

// modelError adds the models sentinel of a call's status to its error.
type modelError struct {
	*CallError
	sentinel error
}

func (e *modelError) Unwrap() []error { return append(e.CallError.Unwrap(), e.sentinel) }

func asModelError(err error) error {
	ce, ok := err.(*CallError)
	if !ok {
		return err
	}
	var s error
	switch ce.Status.Code() {
	case codes.NotFound:
		s = models.ErrNotFound
	case codes.DataLoss:
		s = models.ErrCorrupt
	case codes.InvalidArgument:
		s = models.ErrInvalid
	case codes.FailedPrecondition:
		s = models.ErrSpaces
	default:
		return err
	}
	return &modelError{CallError: ce, sentinel: s}
}

func metaOf(info *pb.ModelInfo) (models.Meta, error) {
	var m models.Meta
	if err := json.Unmarshal([]byte(info.GetMetaJson()), &m); err != nil {
		return models.Meta{}, fmt.Errorf("%w: model %s@%d: meta_json: %w", ErrMismatch, info.GetName(), info.GetVersion(), err)
	}
	m.Name, m.Version, m.SHA256, m.Size = info.GetName(), int(info.GetVersion()), info.GetSha256(), info.GetSize()
	return m, nil
}

// Put implements models.Store: the server stores data as meta.Name's next version.
// The data's checksum travels with it, so bytes damaged on the way are refused.
func (m *ModelClient) Put(ctx context.Context, meta models.Meta, data []byte) (models.Meta, error) {
	if err := models.CheckName(meta.Name); err != nil {
		return models.Meta{}, err
	}
	js, err := json.Marshal(meta)
	if err != nil {
		return models.Meta{}, &models.InvalidError{Field: "meta", Value: meta.Name, Reason: err.Error()}
	}
	sum := sha256.Sum256(data)
	var info *pb.ModelInfo
	err = m.c.call(ctx, methodModelPut, meta.Name, func(ctx context.Context) error {
		var err error
		info, err = m.api.Put(ctx, &pb.PutModelRequest{Name: meta.Name, Data: data, MetaJson: string(js), DataSha256: hex.EncodeToString(sum[:])})
		return err
	})
	if err != nil {
		return models.Meta{}, asModelError(err)
	}
	return metaOf(info)
}

func (m *ModelClient) get(ctx context.Context, name string, version int, metaOnly bool) (models.Meta, []byte, error) {
	if err := models.CheckName(name); err != nil {
		return models.Meta{}, nil, err
	}
	var resp *pb.GetModelResponse
	err := m.c.call(ctx, methodModelGet, name, func(ctx context.Context) error {
		var err error
		resp, err = m.api.Get(ctx, &pb.GetModelRequest{Name: name, Version: int64(version), MetaOnly: metaOnly})
		return err
	})
	if err != nil {
		return models.Meta{}, nil, asModelError(err)
	}
	meta, err := metaOf(resp.GetModel())
	if err != nil {
		return models.Meta{}, nil, err
	}
	if !metaOnly {
		if err := meta.Verify(resp.GetData()); err != nil {
			return models.Meta{}, nil, err
		}
	}
	return meta, resp.GetData(), nil
}

// Get implements models.Store; the bytes are checked against the checksum again
// on arrival.
func (m *ModelClient) Get(ctx context.Context, name string, version int) (models.Meta, []byte, error) {
	return m.get(ctx, name, version, false)
}

// Stat implements models.Store.
func (m *ModelClient) Stat(ctx context.Context, name string, version int) (models.Meta, error) {
	meta, _, err := m.get(ctx, name, version, true)
	return meta, err
}

// List implements models.Store: with name "", the newest version of every model
// the key grants.
func (m *ModelClient) List(ctx context.Context, name string) ([]models.Meta, error) {
	var resp *pb.ListModelsResponse
	err := m.c.call(ctx, methodModelList, name, func(ctx context.Context) error {
		var err error
		resp, err = m.api.List(ctx, &pb.ListModelsRequest{Name: name})
		return err
	})
	if err != nil {
		return nil, asModelError(err)
	}
	out := make([]models.Meta, 0, len(resp.GetModels()))
	for _, info := range resp.GetModels() {
		meta, err := metaOf(info)
		if err != nil {
			return nil, err
		}
		out = append(out, meta)
	}
	return out, nil
}

// Wait returns the metadata of name's newest version once it is newer than after,
// as models.Registry.Wait does, over one Watch stream, which ctx ends.
func (m *ModelClient) Wait(ctx context.Context, name string, after int) (models.Meta, error) {
	if err := models.CheckName(name); err != nil {
		return models.Meta{}, err
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stream, err := m.api.Watch(ctx, &pb.WatchModelRequest{Name: name, After: int64(after)})
	if err == nil {
		var info *pb.ModelInfo
		if info, err = stream.Recv(); err == nil {
			return metaOf(info)
		}
	}
	if errors.Is(err, io.EOF) {
		err = status.Error(codes.Unavailable, "the server ended the watch")
	}
	return models.Meta{}, asModelError(m.c.fail(ctx, methodModelWatch, name, err, 1))
}
