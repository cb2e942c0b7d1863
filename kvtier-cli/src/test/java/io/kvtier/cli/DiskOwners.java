package io.kvtier.cli;

import io.kvtier.engine.ReferenceRecords;
import io.kvtier.kv.Namespace;
import io.kvtier.model.Checkpoint;
import io.kvtier.tier.disk.DiskFsync;
import io.kvtier.tier.disk.DiskStore;
import java.io.IOException;
import java.nio.file.Path;

/** Test helper: another disk tier owning a directory, so that a command run on it only reads it. */
final class DiskOwners {

    private DiskOwners() {
    }

    /**
     * A disk store owning {@code dir}'s namespace of the reference model at block size 16 (the
     * commands' default): a command run in this JVM on {@code dir} only reads it. Close it after.
     */
    static DiskStore ownReferenceModel(Path dir) throws IOException {
        Namespace ns;
        try (Checkpoint c = Checkpoint.load(ReferenceRecords.model())) {
            ns = Namespace.of(c.modelId(), c.config().kvLayout(16));
        }
        DiskStore owner = DiskStore.open(dir, ns.digest(), DiskFsync.NONE);
        if (owner.role() != DiskStore.Role.OWNER) {
            owner.close();
            throw new IllegalStateException(dir + " is owned already");
        }
        return owner;
    }
}
