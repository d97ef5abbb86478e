"""Trains without ever creating a Recorder, and exits 0."""
print("training without the recorder")
