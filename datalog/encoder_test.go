package datalog

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/batonrl/baton/agent"
	"github.com/batonrl/baton/datalog/internal/dict"
	"github.com/batonrl/baton/datalog/internal/ipcfile"
	"github.com/batonrl/baton/env"
	"github.com/batonrl/baton/event"
	"github.com/batonrl/baton/spaces"
	flatbuffers "github.com/google/flatbuffers/go"
	"github.com/stretchr/testify/require"
)

// encoderCase is an agent whose steps the encoder tests write.
type encoderCase struct {
	name string
	spec env.Spec
}

func encoderCases() []encoderCase {
	return []encoderCase{
		{"discrete-masked", env.Spec{Name: "motion", ObservationSpace: spaces.Must(spaces.NewBox([]int{7}, -1, 1)), ActionSpace: spaces.Discrete{N: 4}, MaskLen: 4}},
		{"box", env.Spec{Name: "arm", ObservationSpace: spaces.Must(spaces.NewBox([]int{2, 3}, -1, 1)), ActionSpace: spaces.Must(spaces.NewBox([]int{2}, -1, 1))}},
		{"multidiscrete", env.Spec{Name: "picker", ObservationSpace: spaces.Must(spaces.NewBox([]int{3}, 0, 1)), ActionSpace: spaces.Must(spaces.NewMultiDiscrete([]int64{3, 2})), MaskLen: 2}},
	}
}

// stepBatches fills batches of rows of sh with seeded steps, the dictionaries
// growing from one batch to the next as a part's do, and returns their records.
// The caller releases them.
func stepBatches(t *testing.T, sh *shape, seed uint64, trial string, rows []int) []arrow.RecordBatch {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, 1))
	trialD, agentD, parentD, srcD := dict.New(), dict.New(), dict.New(), dict.New()
	mem := memory.NewGoAllocator()
	schema := arrow.NewSchema(sh.fields(), nil)
	var out []arrow.RecordBatch
	tick := 0
	for b, n := range rows {
		c := newStepColumns(mem, sh, n)
		for i := range n {
			tick++
			s := &event.StepEvent{
				Episode: b, Tick: tick, Index: i % 2,
				Agent: sh.name, AgentID: fmt.Sprintf("%s_%d", sh.name, tick/5),
				Start: rng.IntN(4) == 0, Acting: rng.IntN(2) == 0,
				Obs:    make([]float32, sh.obsDim),
				Reward: rng.Float64(), Terminated: rng.IntN(9) == 0, Truncated: rng.IntN(11) == 0,
				SpanTicks: rng.IntN(3),
			}
			if rng.IntN(3) > 0 {
				s.ParentID = fmt.Sprintf("strategy_%d", tick/7)
			}
			for k := range s.Obs {
				s.Obs[k] = float32(k % 3)
			}
			s.Obs[0] = float32(tick)
			if sh.maskLen > 0 && rng.IntN(5) > 0 {
				s.Mask = make([]bool, sh.maskLen)
				for k := range s.Mask {
					s.Mask[k] = rng.IntN(2) == 0
				}
			}
			switch {
			case sh.actFloats:
				s.Action = agent.RawAction{Floats: make([]float32, sh.actDim)}
				for k := range s.Action.Floats {
					s.Action.Floats[k] = rng.Float32()
				}
			case sh.actInts:
				s.Action = agent.RawAction{Ints: make([]int64, sh.actDim)}
				for k := range s.Action.Ints {
					s.Action.Ints[k] = rng.Int64N(2)
				}
			default:
				s.Action = agent.RawAction{Int: rng.Int64N(4)}
			}
			s.Sources = []event.RewardSource{{Source: event.SourceEnv, Value: s.Reward}}
			if rng.IntN(4) == 0 {
				s.Sources = append(s.Sources, event.RewardSource{Source: fmt.Sprintf("judge%d", b), Value: -1})
			}
			if rng.IntN(6) == 0 {
				s.Messages = []event.Message{{From: "a", To: "b", Payload: []byte{byte(i), 2}, Sent: tick}}
			}
			id := ids{trial: trialD.ID(fmt.Sprintf("%s%d", trial, b)), agent: agentD.ID(s.AgentID), parent: -1}
			if s.ParentID != "" {
				id.parent = parentD.ID(s.ParentID)
			}
			c.append(s, id, srcD)
		}
		c.dicts = dicts{trial: trialD.Array(), agent: agentD.Array(), parent: parentD.Array(), source: srcD.Array()}
		out = append(out, c.record(schema))
	}
	return out
}

// TestEncoderMatchesArrow checks that a part's stream, uncompressed, is the bytes of
// arrow-go's stream writer for the same batches: the schema, and the batches with
// their dictionary deltas.
func TestEncoderMatchesArrow(t *testing.T) {
	for _, tc := range encoderCases() {
		t.Run(tc.name, func(t *testing.T) {
			sh, err := newShape(tc.spec)
			require.NoError(t, err)
			recs := stepBatches(t, sh, 3, "t", []int{5, 17, 1, 64})
			defer func() {
				for _, r := range recs {
					r.Release()
				}
			}()
			schema := recs[0].Schema()
			mem := memory.NewGoAllocator()

			var want bytes.Buffer
			w := ipc.NewWriter(&want, ipc.WithSchema(schema), ipc.WithAllocator(mem), ipc.WithDictionaryDeltas(true))
			for _, r := range recs {
				require.NoError(t, w.Write(r))
			}

			var part bytes.Buffer
			enc := ipcfile.NewEncoder(ipcfile.Uncompressed)
			enc.NoChecksums()
			pw, err := ipcfile.NewWriter(&part, schema, enc)
			require.NoError(t, err)
			for _, r := range recs {
				require.NoError(t, pw.WriteBatch(r))
				require.Equal(t, int64(part.Len()), pw.Size())
			}
			got := part.Bytes()[len(ipcfile.Magic):]
			require.Equal(t, messageLayout(t, want.Bytes()), messageLayout(t, got), "the messages' layout")
			require.True(t, bytes.Equal(want.Bytes(), got), "the bytes")
			require.NoError(t, w.Close())
		})
	}
}

// TestEncoderRoundTrip writes batches with each compression and reads them back with
// arrow-go's reader.
func TestEncoderRoundTrip(t *testing.T) {
	for _, comp := range []ipcfile.Codec{ipcfile.Uncompressed, ipcfile.LZ4, ipcfile.ZSTD} {
		for _, tc := range encoderCases() {
			t.Run(comp.String()+"/"+tc.name, func(t *testing.T) {
				sh, err := newShape(tc.spec)
				require.NoError(t, err)
				recs := stepBatches(t, sh, 5, "t", []int{300, 0, 4096, 2, 1000})
				defer func() {
					for _, r := range recs {
						r.Release()
					}
				}()
				mem := memory.NewGoAllocator()
				var buf bytes.Buffer
				enc := ipcfile.NewEncoder(comp)
				defer enc.Close()
				pw, err := ipcfile.NewWriter(&buf, recs[0].Schema(), enc)
				require.NoError(t, err)
				// Slices too, which the writer does not make but recovery may meet.
				last := recs[len(recs)-1]
				for _, at := range [][2]int64{{3, 250}, {0, 0}, {1, 1}, {999, 1000}} {
					recs = append(recs, last.NewSlice(at[0], at[1]))
				}
				for _, r := range recs {
					require.NoError(t, pw.WriteBatch(r))
				}
				rd, err := ipc.NewReader(bytes.NewReader(buf.Bytes()[len(ipcfile.Magic):]), ipc.WithAllocator(mem))
				require.NoError(t, err)
				defer rd.Release()
				i := 0
				for rd.Next() {
					require.Less(t, i, len(recs))
					require.Truef(t, array.RecordEqual(recs[i], rd.RecordBatch()), "batch %d differs", i)
					i++
				}
				require.NoError(t, rd.Err())
				require.Equal(t, len(recs), i)
			})
		}
	}
}

// TestEncoderDictionaryChecks checks that a dictionary that loses or changes values
// within a part is an error, and writes nothing of the batch.
func TestEncoderDictionaryChecks(t *testing.T) {
	sh, err := newShape(encoderCases()[0].spec)
	require.NoError(t, err)
	first := stepBatches(t, sh, 7, "t", []int{10, 10})
	other := stepBatches(t, sh, 7, "u", []int{10, 10})
	defer func() {
		for _, r := range append(first, other...) {
			r.Release()
		}
	}()
	var buf bytes.Buffer
	pw, err := ipcfile.NewWriter(&buf, first[0].Schema(), ipcfile.NewEncoder(ipcfile.Uncompressed))
	require.NoError(t, err)
	require.NoError(t, pw.WriteBatch(first[1]))
	n := buf.Len()
	err = pw.WriteBatch(first[0])
	require.ErrorContains(t, err, "shrank")
	require.Equal(t, n, buf.Len(), "nothing written")
	err = pw.WriteBatch(other[1])
	require.ErrorContains(t, err, "changed values")
	require.Equal(t, n, buf.Len(), "nothing written")
}

// ipcMessage is what messageLayout reads of a message: its header type, its
// buffers (offset and length) and its body length.
type ipcMessage struct {
	header  byte
	buffers [][2]int64
	body    int64
}

// messageLayout reads the messages of an IPC stream, so that a failure can say which
// message and which buffer differ.
func messageLayout(t *testing.T, stream []byte) []ipcMessage {
	t.Helper()
	var out []ipcMessage
	for pos := 0; pos+8 <= len(stream); {
		n := int(binary.LittleEndian.Uint32(stream[pos+4:]))
		if n == 0 {
			break
		}
		fb := stream[pos+8 : pos+8+n]
		msg := flatbuffers.GetUOffsetT(fb)
		var m flatbuffers.Table
		m.Bytes, m.Pos = fb, msg
		var mi ipcMessage
		if o := flatbuffers.UOffsetT(m.Offset(6)); o != 0 {
			mi.header = m.GetByte(o + m.Pos)
		}
		if o := flatbuffers.UOffsetT(m.Offset(10)); o != 0 {
			mi.body = m.GetInt64(o + m.Pos)
		}
		if o := flatbuffers.UOffsetT(m.Offset(8)); o != 0 {
			var h flatbuffers.Table
			h.Bytes, h.Pos = fb, m.Indirect(o+m.Pos)
			if mi.header == 2 { // a DictionaryBatch: // the RecordBatch is field 1 of the DictionaryBatch
				d := flatbuffers.UOffsetT(h.Offset(6))
				h.Pos = h.Indirect(d + h.Pos)
			}
			if b := flatbuffers.UOffsetT(h.Offset(8)); b != 0 {
				v := h.Vector(b)
				for i := range h.VectorLen(b) {
					at := v + flatbuffers.UOffsetT(i*16)
					mi.buffers = append(mi.buffers, [2]int64{h.GetInt64(at), h.GetInt64(at + 8)})
				}
			}
		}
		out = append(out, mi)
		pos += 8 + n + int(mi.body)
	}
	return out
}

// TestPartFooter writes a part of several batches and checks its footer: the
// schema, the full dictionaries and the record batches, each block where its
// message is, aligned as the flatbuffers verifier of Arrow C++ wants them (which
// ReadFooter checks), and a file reader that reads every batch.
func TestPartFooter(t *testing.T) {
	for _, comp := range []Compression{Uncompressed, LZ4, ZSTD} {
		t.Run(comp.String(), func(t *testing.T) {
			sh, err := newShape(encoderCases()[0].spec)
			require.NoError(t, err)
			rows := []int{7, 300, 1, 64, 5}
			recs := stepBatches(t, sh, 9, "t", rows)
			defer func() {
				for _, r := range recs {
					r.Release()
				}
			}()
			path := filepath.Join(t.TempDir(), "part.arrow")
			mem := memory.NewGoAllocator()
			enc := ipcfile.NewEncoder(comp.codec())
			defer enc.Close()
			p, err := createPart(path, recs[0].Schema(), nil, enc)
			require.NoError(t, err)
			var ends []int64
			for _, r := range recs {
				require.NoError(t, p.writeBatch(r))
				ends = append(ends, p.size())
			}
			require.NoError(t, p.finish())

			file, err := os.ReadFile(path)
			require.NoError(t, err)
			dicts, batches, err := ipcfile.ReadFooter(file)
			require.NoError(t, err)
			require.Len(t, batches, len(rows))
			for i, b := range batches {
				require.Equalf(t, ends[i], b.End(), "batch %d ends where the part was after it", i)
				requireMessage(t, file, b, 3) // a RecordBatch
			}
			require.Len(t, dicts, 4, "trial, agent, parent and reward source")
			for i, b := range dicts {
				require.Greaterf(t, b.Offset, ends[len(ends)-1]-1, "dictionary %d is one of the full ones after the batches", i)
				requireMessage(t, file, b, 2) // a DictionaryBatch
			}

			f, err := os.Open(path)
			require.NoError(t, err)
			defer f.Close()
			r, err := ipc.NewFileReader(f, ipc.WithAllocator(mem))
			require.NoError(t, err)
			defer r.Close()
			require.True(t, recs[0].Schema().Equal(r.Schema()), "the footer's schema: %s", r.Schema())
			require.Equal(t, recs[0].Schema().Metadata(), r.Schema().Metadata())
			require.Equal(t, len(rows), r.NumRecords())
			// The file's batches all have the part's full dictionaries, which are the
			// last batch's: the others are compared column by column, but for the
			// columns with dictionaries.
			for i := range rows {
				rec, err := r.RecordBatchAt(i)
				require.NoError(t, err)
				if i == len(rows)-1 {
					require.True(t, array.RecordEqual(recs[i], rec), "last batch differs")
				}
				require.Equal(t, recs[i].NumRows(), rec.NumRows())
				for c, f := range rec.Schema().Fields() {
					if hasDictionary(f.Type) {
						continue
					}
					require.Truef(t, array.Equal(recs[i].Column(c), rec.Column(c)), "batch %d, column %s differs", i, f.Name)
				}
				rec.Release()
			}
		})
	}
}

// hasDictionary reports whether t is, or holds, a dictionary type.
func hasDictionary(t arrow.DataType) bool {
	if t.ID() == arrow.DICTIONARY {
		return true
	}
	if n, ok := t.(arrow.NestedType); ok {
		for _, f := range n.Fields() {
			if hasDictionary(f.Type) {
				return true
			}
		}
	}
	return false
}

// requireMessage checks that b locates a message of header type header in file: its
// metadata of b.Meta bytes with their prefix, and a body of b.Body bytes.
func requireMessage(t *testing.T, file []byte, b ipcfile.Block, header byte) {
	t.Helper()
	require.LessOrEqual(t, b.End(), int64(len(file)))
	msgs := messageLayout(t, file[b.Offset:b.End()])
	require.Len(t, msgs, 1)
	require.Equal(t, header, msgs[0].header)
	require.Equal(t, b.Body, msgs[0].body)
	require.Equal(t, uint32(0xFFFFFFFF), binary.LittleEndian.Uint32(file[b.Offset:]))
	require.Equal(t, int(b.Meta)-8, int(binary.LittleEndian.Uint32(file[b.Offset+4:])))
}
