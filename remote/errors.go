package remote

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// Errors of the package. Client errors are *CallError values, which errors.Is matches
// against the sentinel of their gRPC code; configuration errors wrap ErrConfig.
var (
	// ErrConfig: an option, a key file, an address or a served agent is invalid.
	ErrConfig = errors.New("remote: invalid configuration")
	// ErrUnauthenticated: the server refused the key: a missing key, one it does not
	// know, or (with ErrPermissionDenied) one that does not grant what the call
	// addressed.
	ErrUnauthenticated = errors.New("remote: unauthenticated")
	// ErrPermissionDenied: the server knows the key, but it does not grant the agent
	// or environment the call addressed; the message names those it grants. Errors
	// that match it match ErrUnauthenticated too, as a refused key.
	ErrPermissionDenied = errors.New("remote: permission denied")
	// ErrUnavailable: the server cannot be reached, or went away during the call.
	ErrUnavailable = errors.New("remote: server unavailable")
	// ErrDeadline: the server did not answer within the call's deadline.
	ErrDeadline = errors.New("remote: no answer within the deadline")
	// ErrInvalidArgument: the server rejected a request as malformed; the message
	// names the field.
	ErrInvalidArgument = errors.New("remote: invalid argument")
	// ErrNotFound: the server has no agent, environment, session or trial of that name.
	ErrNotFound = errors.New("remote: not found")
	// ErrRejected: the server refused the call for another reason (a step in the wrong
	// state, too many sessions, a trial id in use, ...); the message says why.
	ErrRejected = errors.New("remote: rejected")
	// ErrMismatch: the remote end describes an agent or environment other than the one
	// the caller expects (different spaces, an action of the wrong kind).
	ErrMismatch = errors.New("remote: the remote end does not match")
)

// FieldError is a malformed field of a request or response: a tensor of the wrong
// dtype, shape or byte length, a NaN where the space forbids it, an action outside
// its space. Servers send it as INVALID_ARGUMENT with a google.rpc.BadRequest detail
// naming the field.
type FieldError struct {
	// Field is the path of the field, as in the .proto: "observation.data",
	// "action.shape", "masks.data".
	Field string
	// Reason says what is wrong and what was wanted.
	Reason string
}

func (e *FieldError) Error() string { return e.Field + ": " + e.Reason }

// fieldErrorf returns a *FieldError.
func fieldErrorf(field, format string, args ...any) *FieldError {
	return &FieldError{Field: field, Reason: fmt.Sprintf(format, args...)}
}

// invalid turns a *FieldError into an INVALID_ARGUMENT status with a BadRequest
// detail.
func invalid(fe *FieldError) error {
	st := status.New(codes.InvalidArgument, fe.Error())
	if d, err := st.WithDetails(&errdetails.BadRequest{FieldViolations: []*errdetails.BadRequest_FieldViolation{
		{Field: fe.Field, Description: fe.Reason},
	}}); err == nil {
		st = d
	}
	return st.Err()
}

// CallError is the failure of a call to a remote agent, environment or controller:
// where it went, which method, and the gRPC status. errors.Is matches it against the
// sentinel of its code (ErrDeadline for DEADLINE_EXCEEDED, ErrUnauthenticated,
// ErrPermissionDenied with ErrUnauthenticated, ErrUnavailable, ErrInvalidArgument,
// ErrNotFound, ErrRejected), and against
// context.Canceled or context.DeadlineExceeded when the caller's context ended the
// call; status.FromError reads its status.
type CallError struct {
	// Addr is the server's address; Method the service method ("AgentService/Act").
	Addr, Method string
	// Target is what the call addressed: an agent, an environment, a session or a
	// trial; "" when nothing in particular.
	Target string
	// Status is the gRPC status the call ended with.
	Status *status.Status
	// Field is the malformed field an INVALID_ARGUMENT status names, if any.
	Field *FieldError
	// cause is the caller's context error when the caller's context ended the call.
	cause error
	// attempts counts the attempts made, when more than one.
	attempts int
}

func (e *CallError) Error() string {
	var b strings.Builder
	b.WriteString("remote: ")
	if e.Target != "" {
		b.WriteString(e.Target + " at ")
	}
	b.WriteString(e.Addr + ": " + e.Method + ": " + e.Status.Code().String())
	if msg := e.Status.Message(); msg != "" {
		b.WriteString(": " + msg)
	}
	if e.attempts > 1 {
		fmt.Fprintf(&b, " (after %d attempts)", e.attempts)
	}
	return b.String()
}

// GRPCStatus returns the call's status, for status.FromError and status.Code.
func (e *CallError) GRPCStatus() *status.Status { return e.Status }

// Unwrap returns the sentinel of the status code (PERMISSION_DENIED has two:
// ErrPermissionDenied and ErrUnauthenticated), the caller's context error if it
// ended the call, and the malformed field if one is named.
func (e *CallError) Unwrap() []error {
	var errs []error
	if e.Status.Code() == codes.PermissionDenied {
		errs = append(errs, ErrPermissionDenied)
	}
	if s := codeSentinel(e.Status.Code()); s != nil {
		errs = append(errs, s)
	}
	if e.cause != nil {
		errs = append(errs, e.cause)
	}
	if e.Field != nil {
		errs = append(errs, e.Field)
	}
	return errs
}

func codeSentinel(c codes.Code) error {
	switch c {
	case codes.Unauthenticated, codes.PermissionDenied:
		return ErrUnauthenticated
	case codes.Unavailable:
		return ErrUnavailable
	case codes.DeadlineExceeded:
		return ErrDeadline
	case codes.InvalidArgument:
		return ErrInvalidArgument
	case codes.NotFound:
		return ErrNotFound
	case codes.OK, codes.Canceled:
		return nil
	}
	return ErrRejected
}

// callError wraps the error of a gRPC call in a *CallError; ctx is the caller's
// context, to tell its cancellation from a server's failure.
func callError(ctx context.Context, addr, method, target string, err error) error {
	if err == nil {
		return nil
	}
	if ce, ok := errors.AsType[*CallError](err); ok {
		return ce
	}
	st := status.Convert(err)
	ce := &CallError{Addr: addr, Method: method, Target: target, Status: st}
	if cerr := ctx.Err(); cerr != nil {
		ce.cause = cerr
	}
	if st.Code() == codes.InvalidArgument {
		for _, d := range st.Details() {
			if br, ok := d.(*errdetails.BadRequest); ok && len(br.GetFieldViolations()) > 0 {
				v := br.GetFieldViolations()[0]
				ce.Field = &FieldError{Field: v.GetField(), Reason: v.GetDescription()}
				break
			}
		}
	}
	return ce
}
