package dev.pagewarden.adminui.web;

import org.springframework.stereotype.Controller;
import org.springframework.web.bind.annotation.GetMapping;

/** The login form; POST /admin/login is handled by Spring Security's form login. */
@Controller
class LoginController {
    @GetMapping("/admin/login")
    String login() {
        return "admin/login";
    }
}
