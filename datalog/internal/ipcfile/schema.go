package ipcfile

import (
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	flatbuffers "github.com/google/flatbuffers/go"
)

// The values of the flatbuffers fields of a schema (Schema.fbs).
const (
	fbHeaderSchema   = 1
	fbTypeNull       = 1
	fbTypeInt        = 2
	fbTypeFloat      = 3
	fbTypeBinary     = 4
	fbTypeUtf8       = 5
	fbTypeBool       = 6
	fbTypeList       = 12
	fbTypeStruct     = 13
	fbTypeUnion      = 14
	fbTypeFixedList  = 16
	fbPrecisionHalf  = 0
	fbPrecisionFloat = 1
	fbPrecisionDbl   = 2
)

// checkSchema reports a type of the schema that the encoder does not write.
func checkSchema(s *arrow.Schema) error {
	for _, f := range s.Fields() {
		if err := checkType(f.Type); err != nil {
			return fmt.Errorf("field %s: %w", f.Name, err)
		}
	}
	return nil
}

func checkType(t arrow.DataType) error {
	switch t := t.(type) {
	case *arrow.NullType, *arrow.BooleanType, *arrow.StringType, *arrow.BinaryType,
		*arrow.Int8Type, *arrow.Int16Type, *arrow.Int32Type, *arrow.Int64Type,
		*arrow.Uint8Type, *arrow.Uint16Type, *arrow.Uint32Type, *arrow.Uint64Type,
		*arrow.Float16Type, *arrow.Float32Type, *arrow.Float64Type:
		return nil
	case *arrow.DictionaryType:
		switch t.ValueType.ID() {
		case arrow.STRING, arrow.BINARY:
		default:
			return fmt.Errorf("dictionaries of %s are not supported", t.ValueType)
		}
		if _, ok := t.IndexType.(arrow.FixedWidthDataType); !ok || !arrow.IsInteger(t.IndexType.ID()) {
			return fmt.Errorf("dictionary indices of %s are not supported", t.IndexType)
		}
		return nil
	case *arrow.StructType, *arrow.ListType, *arrow.FixedSizeListType:
		for _, f := range t.(arrow.NestedType).Fields() {
			if err := checkType(f.Type); err != nil {
				return fmt.Errorf("%s: %w", f.Name, err)
			}
		}
		return nil
	}
	return fmt.Errorf("arrays of %s are not supported", t)
}

// schemaMessage builds the Message flatbuffer of schema s, with the calls, in the
// order, of arrow-go's writer, which checkSchema accepted.
func (e *Encoder) schemaMessage(s *arrow.Schema) []byte {
	b := e.fb
	b.Reset()
	sch := schemaTable(b, s)
	b.StartObject(5) // Message
	b.PrependInt16Slot(0, fbMetadataV5, 0)
	b.PrependByteSlot(1, fbHeaderSchema, 0)
	b.PrependUOffsetTSlot(2, sch, 0)
	b.PrependInt64Slot(3, 0, 0)
	b.Finish(b.EndObject())
	return b.FinishedBytes()
}

// schemaTable adds the Schema table of s to b. Dictionaries take their ids in the
// order of a depth-first walk of the fields, as arrow-go gives them and as
// collectDicts finds them.
func schemaTable(b *flatbuffers.Builder, s *arrow.Schema) flatbuffers.UOffsetT {
	nextDict := int64(0)
	fields := make([]flatbuffers.UOffsetT, s.NumFields())
	for i, f := range s.Fields() {
		fields[i] = fieldTable(b, f, &nextDict)
	}
	fieldsVec := offsetVector(b, fields)
	meta := metadataVector(b, s.Metadata())
	b.StartObject(4) // Schema
	b.PrependInt16Slot(0, int16(s.Endianness()), 0)
	b.PrependUOffsetTSlot(1, fieldsVec, 0)
	b.PrependUOffsetTSlot(2, meta, 0)
	return b.EndObject()
}

// fieldTable adds the Field table of f to b; nextDict is the id of the next
// dictionary.
func fieldTable(b *flatbuffers.Builder, f arrow.Field, nextDict *int64) flatbuffers.UOffsetT {
	name := b.CreateString(f.Name)
	t := f.Type
	dict, isDict := t.(*arrow.DictionaryType)
	var dictID int64
	if isDict {
		t = dict.ValueType
		dictID = *nextDict
		*nextDict++
	}
	var kids []flatbuffers.UOffsetT
	var typ flatbuffers.UOffsetT
	var typeType byte
	switch t := t.(type) {
	case *arrow.NullType:
		typeType, typ = fbTypeNull, emptyTable(b)
	case *arrow.BooleanType:
		typeType, typ = fbTypeBool, emptyTable(b)
	case *arrow.Float16Type, *arrow.Float32Type, *arrow.Float64Type:
		prec := int16(fbPrecisionDbl)
		switch t.ID() {
		case arrow.FLOAT16:
			prec = fbPrecisionHalf
		case arrow.FLOAT32:
			prec = fbPrecisionFloat
		}
		b.StartObject(1) // FloatingPoint
		b.PrependInt16Slot(0, prec, 0)
		typeType, typ = fbTypeFloat, b.EndObject()
	case *arrow.BinaryType:
		typeType, typ = fbTypeBinary, emptyTable(b)
	case *arrow.StringType:
		typeType, typ = fbTypeUtf8, emptyTable(b)
	case *arrow.StructType:
		for _, c := range t.Fields() {
			kids = append(kids, fieldTable(b, c, nextDict))
		}
		// arrow-go writes the children's offsets into the Struct_ table too, where
		// readers skip them: so does this, to write its bytes.
		b.StartObject(0)
		for i := len(kids) - 1; i >= 0; i-- {
			b.PrependUOffsetT(kids[i])
		}
		typeType, typ = fbTypeStruct, b.EndObject()
	case *arrow.ListType:
		kids = append(kids, fieldTable(b, t.ElemField(), nextDict))
		typeType, typ = fbTypeList, emptyTable(b)
	case *arrow.FixedSizeListType:
		kids = append(kids, fieldTable(b, t.ElemField(), nextDict))
		b.StartObject(1) // FixedSizeList
		b.PrependInt32Slot(0, t.Len(), 0)
		typeType, typ = fbTypeFixedList, b.EndObject()
	default: // the integers, as checkType has it
		typeType, typ = fbTypeInt, intTable(b, t)
	}
	kidsVec := offsetVector(b, kids)
	var dictEnc flatbuffers.UOffsetT
	if isDict {
		idx := intTable(b, dict.IndexType)
		b.StartObject(4) // DictionaryEncoding
		b.PrependInt64Slot(0, dictID, 0)
		b.PrependUOffsetTSlot(1, idx, 0)
		b.PrependBoolSlot(2, dict.Ordered, false)
		dictEnc = b.EndObject()
	}
	meta := metadataVector(b, f.Metadata)
	b.StartObject(7) // Field
	b.PrependUOffsetTSlot(0, name, 0)
	b.PrependBoolSlot(1, f.Nullable, false)
	b.PrependByteSlot(2, typeType, 0)
	b.PrependUOffsetTSlot(3, typ, 0)
	b.PrependUOffsetTSlot(4, dictEnc, 0)
	b.PrependUOffsetTSlot(5, kidsVec, 0)
	b.PrependUOffsetTSlot(6, meta, 0)
	return b.EndObject()
}

// intTable adds the Int table of integer type t.
func intTable(b *flatbuffers.Builder, t arrow.DataType) flatbuffers.UOffsetT {
	signed := false
	switch t.ID() {
	case arrow.INT8, arrow.INT16, arrow.INT32, arrow.INT64:
		signed = true
	}
	b.StartObject(2) // Int
	b.PrependInt32Slot(0, int32(t.(arrow.FixedWidthDataType).BitWidth()), 0)
	b.PrependBoolSlot(1, signed, false)
	return b.EndObject()
}

func emptyTable(b *flatbuffers.Builder) flatbuffers.UOffsetT {
	b.StartObject(0)
	return b.EndObject()
}

// offsetVector adds a vector of the tables at offs.
func offsetVector(b *flatbuffers.Builder, offs []flatbuffers.UOffsetT) flatbuffers.UOffsetT {
	b.StartVector(4, len(offs), 4)
	for i := len(offs) - 1; i >= 0; i-- {
		b.PrependUOffsetT(offs[i])
	}
	return b.EndVector(len(offs))
}

// metadataVector adds a vector of the KeyValue tables of md; 0 when it is empty.
func metadataVector(b *flatbuffers.Builder, md arrow.Metadata) flatbuffers.UOffsetT {
	if md.Len() == 0 {
		return 0
	}
	kvs := make([]flatbuffers.UOffsetT, md.Len())
	for i, k := range md.Keys() {
		key := b.CreateString(k)
		val := b.CreateString(md.Values()[i])
		b.StartObject(2) // KeyValue
		b.PrependUOffsetTSlot(0, key, 0)
		b.PrependUOffsetTSlot(1, val, 0)
		kvs[i] = b.EndObject()
	}
	return offsetVector(b, kvs)
}
