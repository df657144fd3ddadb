package dev.pagewarden.incident.audit;

import dev.pagewarden.db.evidence.RowChains;
import dev.pagewarden.incident.PlatformPort;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.jdbc.datasource.DataSourceUtils;
import org.springframework.stereotype.Component;
import org.springframework.transaction.support.TransactionSynchronizationManager;
import org.springframework.transaction.support.TransactionTemplate;

import javax.sql.DataSource;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.function.Supplier;

/**
 * Links evidence rows (admin audit, incident entries, safety events, disclosure versions) into this node's
 * hash chains, in the transaction that writes them: a row and its link commit together or not at all.
 * Blocking.
 */
@Component
public class EvidenceChain {
    private static final int TIMEOUT_SECONDS = 10;

    private final DataSource dataSource;
    private final TransactionTemplate tx;
    private final ObjectProvider<PlatformPort> platform;
    private volatile RowChains chains;

    /** {@code platform}: asked for the node id at the first link (the platform's safety events come through here too). */
    EvidenceChain(DataSource dataSource, TransactionTemplate tx, ObjectProvider<PlatformPort> platform) {
        this.dataSource = dataSource;
        this.tx = tx;
        this.platform = platform;
    }

    /** Runs {@code write} in a transaction (joining the caller's one when there is one). */
    public <T> T write(Supplier<T> write) {
        return tx.execute(s -> write.get());
    }

    /** Appends row {@code id} of {@code table} to this node's chain of that table; needs the row's transaction. */
    public void link(String table, long id) {
        if (!TransactionSynchronizationManager.isActualTransactionActive()) {
            throw new IllegalStateException("a chain link must be written in the transaction of its " + table + " row");
        }
        RowChains c = chains;
        if (c == null) {
            chains = c = new RowChains(platform.getObject().nodeId(), TIMEOUT_SECONDS);
        }
        Connection connection = DataSourceUtils.getConnection(dataSource);
        try {
            c.link(connection, table, id);
        } catch (SQLException e) {
            throw new IllegalStateException("could not link " + table + " row " + id + " into its chain: " + e.getMessage(), e);
        } finally {
            DataSourceUtils.releaseConnection(connection, dataSource);
        }
    }
}
