package dev.pagewarden.platform.engine;

import org.springframework.data.jpa.repository.JpaRepository;

public interface ModelVisibilityRepository extends JpaRepository<ModelVisibility, String> {
}
