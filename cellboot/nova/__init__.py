"""nova-api as a client: Nova's wire format, read without importing nova.

``primitives`` reads oslo.versionedobjects primitives against schemas;
``casts`` turns nova-api's ``schedule_and_build_instances`` into what
cellboot builds. docs/nova.md says what is accepted and refused.
"""
