"""cel.descriptors writes the FileDescriptorProtos of draguard's message types by hand (a lint
does not import descriptor_pb2): the bytes are those descriptor_pb2 serializes from the same
description, built here the way the code built them before."""

from google.protobuf import descriptor_pb2

from draguard.cel import checked, library

FieldProto = descriptor_pb2.FieldDescriptorProto


def test_the_value_types_are_descriptor_pb2s():
    for package, names in library._TYPES.items():
        proto = descriptor_pb2.FileDescriptorProto(name=f"draguard/cel_{package}.proto", package=package,
                                                   syntax="proto3")
        for name in names:
            message = proto.message_type.add(name=name)
            for number, field_name in enumerate(library._FIELDS.get(name, ("value",)), 1):
                message.field.add(name=field_name, number=number, type=FieldProto.TYPE_STRING,
                                  label=FieldProto.LABEL_OPTIONAL)
        assert library._file_descriptor(package, names) == proto.SerializeToString()


def test_the_checked_ast_schema_is_descriptor_pb2s():
    """Message-typed, repeated and oneof fields, messages over 127 bytes (two-byte lengths) included."""
    proto = descriptor_pb2.FileDescriptorProto(name="draguard/cel_checked.proto", package="draguard.celast",
                                               syntax="proto2")
    for message_name, fields in checked._SCHEMA.items():
        message = proto.message_type.add(name=message_name)
        oneof, members = checked._KINDS.get(message_name, (None, set()))
        if oneof:
            message.oneof_decl.add(name=oneof)
        for name, number, kind, label, type_name in fields:
            field = message.field.add(name=name, number=number, type=kind, label=label,
                                      type_name=f".draguard.celast.{type_name}" if type_name else None)
            if name in members:
                field.oneof_index = 0
    assert any(len(message.SerializeToString()) > 127 for message in proto.message_type)
    assert checked._file_descriptor() == proto.SerializeToString()
