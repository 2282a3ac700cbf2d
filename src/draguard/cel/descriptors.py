"""The serialized FileDescriptorProto (google/protobuf/descriptor.proto) of draguard's own
message types, written here rather than built with descriptor_pb2: importing that module
costs a one-file lint about 5 ms for a few hundred bytes. Only what draguard's types use is
written (messages of scalar or message fields, optional or repeated, and one oneof), in the
field-number order protobuf serializes in; tests/unit/cel/test_descriptors.py compares the
bytes with descriptor_pb2's."""

from __future__ import annotations

from collections.abc import Iterable
from typing import NamedTuple

#: FieldDescriptorProto.Type and .Label values (descriptor.proto)
TYPE_DOUBLE, TYPE_INT64, TYPE_UINT64, TYPE_INT32, TYPE_BOOL, TYPE_STRING = 1, 3, 4, 5, 8, 9
TYPE_MESSAGE, TYPE_BYTES = 11, 12
LABEL_OPTIONAL, LABEL_REPEATED = 1, 3


class Field(NamedTuple):
    name: str
    number: int
    type: int
    label: int = LABEL_OPTIONAL
    type_name: str | None = None  # a message field's type, fully qualified (".package.Name")
    oneof_index: int | None = None  # the message's oneof it belongs to


class MessageType(NamedTuple):
    name: str
    fields: tuple[Field, ...]
    oneofs: tuple[str, ...] = ()


def file_descriptor(name: str, package: str, syntax: str, messages: Iterable[MessageType]) -> bytes:
    """FileDescriptorProto: name 1, package 2, message_type 4, syntax 12."""
    return (_text(1, name) + _text(2, package) + b"".join(_nested(4, _message(m)) for m in messages)
            + _text(12, syntax))


def _message(message: MessageType) -> bytes:
    """DescriptorProto: name 1, field 2, oneof_decl 8 (OneofDescriptorProto: name 1)."""
    return (_text(1, message.name) + b"".join(_nested(2, _field(f)) for f in message.fields)
            + b"".join(_nested(8, _text(1, oneof)) for oneof in message.oneofs))


def _field(field: Field) -> bytes:
    """FieldDescriptorProto: name 1, number 3, label 4, type 5, type_name 6, oneof_index 9."""
    out = _text(1, field.name) + _integer(3, field.number) + _integer(4, field.label) + _integer(5, field.type)
    if field.type_name is not None:
        out += _text(6, field.type_name)
    if field.oneof_index is not None:
        out += _integer(9, field.oneof_index)
    return out


def _nested(number: int, payload: bytes) -> bytes:
    return _varint(number << 3 | 2) + _varint(len(payload)) + payload


def _text(number: int, value: str) -> bytes:
    return _nested(number, value.encode())


def _integer(number: int, value: int) -> bytes:
    return _varint(number << 3) + _varint(value)


def _varint(value: int) -> bytes:
    out = bytearray()
    while value > 0x7F:
        out.append(value & 0x7F | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)
