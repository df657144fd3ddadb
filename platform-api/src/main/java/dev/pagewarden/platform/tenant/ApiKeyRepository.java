package dev.pagewarden.platform.tenant;

import org.springframework.data.jpa.repository.JpaRepository;

import java.util.List;
import java.util.Optional;

public interface ApiKeyRepository extends JpaRepository<ApiKey, Long> {
    Optional<ApiKey> findByPrefix(String prefix);

    List<ApiKey> findByTenantIdOrderByCreatedAt(String tenantId);
}
