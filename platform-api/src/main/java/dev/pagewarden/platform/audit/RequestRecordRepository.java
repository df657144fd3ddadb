package dev.pagewarden.platform.audit;

import org.springframework.data.jpa.repository.JpaRepository;

import java.util.Optional;

public interface RequestRecordRepository extends JpaRepository<RequestRecord, Long> {
    Optional<RequestRecord> findByIdAndTenantId(Long id, String tenantId);

    Optional<RequestRecord> findByPublicIdAndTenantId(String publicId, String tenantId);
}
